"""Reading a sentence-transformers folder without torch: what it accepts, what it refuses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from graphmem.engine import model_folder
from graphmem.engine.embedding import default_model_path
from graphmem.errors import EmbeddingError

MODULES = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
           {"idx": 1, "name": "1", "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling"},
           {"idx": 2, "name": "2", "path": "2_Normalize",
            "type": "sentence_transformers.models.Normalize"}]


def _folder(tmp_path: Path, *, modules: list[dict[str, object]] = MODULES,
            pooling: dict[str, object] | None = None, settings: dict[str, object] | None = None,
            tokenizer: bool = True) -> str:
    src = Path(default_model_path())
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "modules.json").write_text(json.dumps(modules))
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps(
        pooling or {"word_embedding_dimension": 384, "pooling_mode_mean_tokens": True}))
    (tmp_path / "sentence_bert_config.json").write_text(json.dumps(
        settings or {"max_seq_length": 64, "do_lower_case": False}))
    if tokenizer:
        shutil.copy(src / "tokenizer.json", tmp_path / "tokenizer.json")
    return str(tmp_path)


def test_the_packaged_model_is_read_with_its_own_limit() -> None:
    spec = model_folder.read(default_model_path())
    assert spec is not None and (spec.max_seq_length, spec.dim, spec.pad_id) == (256, 384, 0)
    # the file's fixed padding to 128 is off (the embedder pads to the batch's longest)
    assert len(spec.tokenizer.encode("two words").ids) == 4
    assert len(spec.tokenizer.encode("word " * 1000).ids) == 256


def test_a_folder_sets_the_truncation_and_the_width(tmp_path: Path) -> None:
    spec = model_folder.read(_folder(tmp_path))
    assert spec is not None and spec.max_seq_length == 64
    assert len(spec.tokenizer.encode("word " * 1000).ids) == 64


@pytest.mark.parametrize("pooling", [
    {"word_embedding_dimension": 384, "pooling_mode_cls_token": True},
    {"word_embedding_dimension": 384, "pooling_mode_mean_tokens": True,
     "pooling_mode_max_tokens": True},
    {"word_embedding_dimension": 384, "pooling_mode": "lasttoken"},
])
def test_a_pipeline_that_is_not_mean_pooled_is_refused(tmp_path: Path,
                                                       pooling: dict[str, object]) -> None:
    with pytest.raises(EmbeddingError, match="mean-pooled"):
        model_folder.read(_folder(tmp_path, pooling=pooling))


def test_an_extra_module_is_refused(tmp_path: Path) -> None:
    dense = {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}
    with pytest.raises(EmbeddingError, match="mean-pooled"):
        model_folder.read(_folder(tmp_path, modules=[*MODULES[:2], dense]))


def test_what_the_files_do_not_say_is_left_to_the_full_load(tmp_path: Path) -> None:
    assert model_folder.read("sentence-transformers/all-MiniLM-L6-v2") is None  # a name
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert model_folder.read(_folder(tmp_path / "a", tokenizer=False)) is None
    lowered = _folder(tmp_path / "b", settings={"max_seq_length": 64, "do_lower_case": True})
    assert model_folder.read(lowered) is None  # sentence-transformers lowers the text itself


def test_a_broken_file_is_an_embedding_error(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (tmp_path / "1_Pooling" / "config.json").write_text("{not json")
    with pytest.raises(EmbeddingError, match="cannot read"):
        model_folder.read(folder)
