"""The embedding model's ONNX files are written without torch (issue 47) and give
sentence-transformers' vectors: checked against reference vectors stored in the repository
(``tests/fixtures/embedding_reference.npz``, made by ``scripts/make_embedding_reference.py``),
so neither CI nor a user needs torch to check them."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphmem import GraphMemory
from graphmem.config import EmbeddingConfig, GraphMemConfig, TuningConfig
from graphmem.engine import onnx_build, onnx_export
from graphmem.engine.embedding import SentenceTransformerEmbedder, default_model_path
from graphmem.engine.onnx_embedding import OnnxEmbedder

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "embedding_reference.npz"
HEAVY = ("torch", "transformers", "sentence_transformers")
#: sentence-transformers' vectors against the float files'
SAME = 0.99999
#: the int8 query model (ADR 0046) against the float vectors: 0.008-0.010 from them on the
#: check texts, <= 0.0099 on LoCoMo's questions, up to 0.03 on this fixture's odd texts
#: (a URL, Korean, the empty text)
QUERIES = 1 - 2 * onnx_export.QUERY_GAP


def _fixture() -> tuple[list[str], np.ndarray]:
    data = np.load(FIXTURE, allow_pickle=False)
    return [str(t) for t in data["texts"]], data["vectors"]


def _child(code: str) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter; its last line of output is JSON."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return {**json.loads(done.stdout.splitlines()[-1]), "stderr": done.stderr}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A fresh process writes the files into an empty cache folder and embeds the fixture with
    the default config: memories one at a time (a batch of 8 or more would run in bfloat16
    with torch on an AMX CPU where torch is installed, ADR 0049), the whole fixture as one
    padded batch with the float model, and queries."""
    cache = tmp_path_factory.mktemp("built")
    code = (
        "import json, sys\n"
        "import numpy as np\n"
        "from graphmem.config import EmbeddingConfig, TuningConfig\n"
        "from graphmem.engine.embedding import make_embedder\n"
        f"texts = [str(t) for t in np.load({str(FIXTURE)!r})['texts']]\n"
        f"e = make_embedder(EmbeddingConfig(cache_dir={str(cache)!r}))\n"
        "alone = np.concatenate([e.embed([t]) for t in texts])\n"
        "queries = e.embed_queries(texts)\n"
        f"batch = make_embedder(EmbeddingConfig(cache_dir={str(cache)!r}), "
        "TuningConfig(bf16_batches=False)).embed(texts)\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(json.dumps({'heavy': heavy, 'alone': alone.tolist(), 'batch': batch.tolist(),"
        " 'queries': queries.tolist(), 'file': e.model_file.name,"
        " 'query_file': e.query_model_file.name}))\n")
    return {**_child(code), "cache": cache}


@pytest.mark.model
def test_a_fresh_process_writes_the_files_and_embeds_as_sentence_transformers_without_torch(
        built: dict[str, Any]) -> None:
    texts, want = _fixture()
    assert len(texts) >= 20 and want.shape == (len(texts), 384)
    assert built["heavy"] == []
    for key in ("alone", "batch"):
        got = np.array(built[key], dtype=np.float32)
        assert float((got * want).sum(axis=1).min()) >= SAME, key
    queries = (np.array(built["queries"], dtype=np.float32) * want).sum(axis=1)
    assert float(queries.min()) >= QUERIES
    assert float(queries.min()) < 0.9999  # the int8 query model ran
    plain = next(p for p in built["cache"].iterdir() if p.name.count("-") == 0)
    assert built["file"] == plain.name.replace(".onnx", "-fused.onnx")
    assert built["query_file"] == plain.name.replace(".onnx", "-fused-int8-7bit.onnx")
    assert "Traceback" not in built["stderr"] and "Warning" not in built["stderr"]


@pytest.mark.model
def test_the_built_plain_and_fused_files_give_the_same_vectors(built: dict[str, Any]) -> None:
    embedder = OnnxEmbedder(EmbeddingConfig(cache_dir=str(built["cache"])))
    embedder._ready()
    assert embedder.model_file is not None
    fused = embedder.model_file
    plain = fused.with_name(fused.name.replace("-fused", ""))
    assert fused.read_bytes() != plain.read_bytes()  # fused, not the plain file's copy
    assert onnx_export._largest_gap(plain, fused, embedder._tokenize) <= 1e-5


@pytest.mark.model
def test_the_built_fused_file_has_the_fused_operators(built: dict[str, Any]) -> None:
    import onnx

    fused = next(built["cache"].glob("*-fused.onnx"))
    ops = Counter(n.op_type for n in onnx.load(str(fused)).graph.node)
    # as the torch export's fused file (ADR 0040): nothing left unfused
    assert ops == {"EmbedLayerNormalization": 1, "Attention": 6, "SkipLayerNormalization": 12,
                   "BiasGelu": 6, "MatMul": 18, "Cast": 3}


@pytest.mark.model
def test_a_process_without_torch_embeds_batches_with_the_float_model(
        built: dict[str, Any]) -> None:
    texts, want = _fixture()
    code = (
        "import json, sys\n"
        f"for m in {HEAVY!r}:\n"
        "    sys.modules[m] = None  # not installed: importing it raises ImportError\n"
        "import numpy as np\n"
        "from graphmem.config import EmbeddingConfig\n"
        "from graphmem.engine.embedding import make_embedder\n"
        f"e = make_embedder(EmbeddingConfig(cache_dir={str(built['cache'])!r}))\n"
        f"print(json.dumps({{'v': e.embed({texts!r}).tolist()}}))\n")
    got = _child(code)
    assert float((np.array(got["v"], dtype=np.float32) * want).sum(axis=1).min()) >= SAME
    assert "bfloat16" not in got["stderr"] and "Traceback" not in got["stderr"]


def _folder_like_the_model(tmp_path: Path, **config: Any) -> Path:
    """The packaged model folder's files linked into ``tmp_path``, config.json changed."""
    source = Path(default_model_path())
    for item in source.iterdir():
        (tmp_path / item.name).symlink_to(item)
    settings = json.loads((source / "config.json").read_text())
    (tmp_path / "config.json").unlink()
    (tmp_path / "config.json").write_text(json.dumps({**settings, **config}))
    return tmp_path


@pytest.mark.parametrize("change", [{"model_type": "roberta"}, {"hidden_act": "gelu_new"},
                                    {"position_embedding_type": "relative_key"},
                                    {"num_attention_heads": 5}])
def test_the_builder_takes_only_the_bert_folders_it_writes(
        tmp_path: Path, change: dict[str, Any]) -> None:
    same, other = tmp_path / "same", tmp_path / "other"
    same.mkdir()
    other.mkdir()
    assert onnx_build.supported(_folder_like_the_model(same))
    assert not onnx_build.supported(_folder_like_the_model(other, **change))


def test_the_builder_needs_safetensors_and_mean_pooling(tmp_path: Path) -> None:
    folder = _folder_like_the_model(tmp_path)
    (folder / "model.safetensors").unlink()
    assert not onnx_build.supported(folder)
    (folder / "model.safetensors").symlink_to(Path(default_model_path()) / "model.safetensors")
    assert onnx_build.supported(folder)
    (folder / "1_Pooling").unlink()  # a link to the model's: CLS pooling instead
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": 384, "pooling_mode_cls_token": True}))
    assert not onnx_build.supported(folder)


@pytest.mark.model
def test_a_model_the_builder_does_not_write_embeds_with_sentence_transformers(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("sentence_transformers")
    (tmp_path / "model").mkdir()
    folder = _folder_like_the_model(tmp_path / "model", hidden_act="gelu_new")
    texts, _ = _fixture()
    embedder = OnnxEmbedder(EmbeddingConfig(model=str(folder), cache_dir=str(tmp_path / "c")))
    got, queries = embedder.embed(texts), embedder.embed_queries(texts[:3])
    want = SentenceTransformerEmbedder(EmbeddingConfig(model=str(folder), backend="torch"))
    assert np.array_equal(got, want.embed(texts))
    assert np.array_equal(queries, want.embed(texts[:3]))
    assert not (tmp_path / "c").exists() and embedder.model_file is None
    assert "writes BERT model folders only" in caplog.text


def _torch_files(embedder: OnnxEmbedder, folder: Path) -> None:
    """The plain, fused and int8 files as torch exported them before issue 47 (ADRs 0010,
    0040), under the names ``embedder`` looks for."""
    import torch
    from onnxruntime.transformers import optimizer
    from sentence_transformers import SentenceTransformer

    from graphmem.engine.onnx_export import quantized

    model = SentenceTransformer(default_model_path(), device="cpu", local_files_only=True)
    transformer: Any = model[0].auto_model
    transformer.eval()
    sample = model.tokenizer(["graphmem", "exports its model"], padding=True,
                             return_tensors="pt")
    names = list(sample.keys())

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, *args: Any) -> Any:
            return self.inner(**dict(zip(names, args, strict=True))).last_hidden_state

    def export(target: Path) -> None:
        torch.onnx.export(Wrapped(), tuple(sample[n] for n in names), str(target),
                          input_names=names, output_names=["hidden"], opset_version=17,
                          dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "hidden"]},
                          dynamo=False)

    plain = embedder._onnx_path()
    export(plain)
    transformer.set_attn_implementation("eager")  # the pattern the optimizer fuses
    export(folder / "eager.onnx")
    optimizer.optimize_model(str(folder / "eager.onnx"), model_type="bert", opt_level=1,
                             use_gpu=False, num_heads=12, hidden_size=384
                             ).save_model_to_file(str(plain.with_name(plain.stem + "-fused.onnx")))
    quantized(plain)


@pytest.mark.slow
@pytest.mark.model
def test_a_store_written_with_the_torch_export_opens_with_the_built_files(
        tmp_path: Path, built: dict[str, Any]) -> None:
    """Stores written before issue 47 (the files exported by torch) keep passing
    ``verify_store`` (ADR 0025) with the files written without torch, float and int8."""
    pytest.importorskip("torch")
    pytest.importorskip("sentence_transformers")
    texts, _ = _fixture()
    torch_cache, data = tmp_path / "torch", tmp_path / "data"
    torch_cache.mkdir()
    _torch_files(OnnxEmbedder(EmbeddingConfig(cache_dir=str(torch_cache))), tmp_path)
    settings: dict[str, dict[str, Any]] = {"float": {}, "int8": {"quantize": True}}
    for cache in (torch_cache, built["cache"]):
        for namespace, extra in settings.items():
            config = GraphMemConfig(embedding=EmbeddingConfig(cache_dir=str(cache), **extra),
                                    tuning=TuningConfig(bf16_batches=False))
            with GraphMemory.open(data, config=config) as mem:
                if cache == built["cache"]:  # the built files check the torch files' store
                    assert mem.retrieve("why did the deploy fail?", namespace=namespace)
                    assert mem.core.vectors.checked == {namespace}
                elif namespace == "float":
                    mem.store_many([{"content": t} for t in texts if t.strip()],
                                   namespace=namespace)
                else:  # one by one: the int8 model's vector of a text depends on the batch
                    # it was in (activations quantised per batch), and the check embeds it alone
                    for text in texts[:4]:
                        mem.store(text, namespace=namespace)
    # the files themselves: the hidden states of torch's files, to the bit or nearly
    embedder = OnnxEmbedder(EmbeddingConfig(cache_dir=str(built["cache"])))
    embedder._ready()
    batch = embedder._tokenize(texts)
    for name in ("", "-fused", "-int8", "-fused-int8-7bit"):
        pair = [c / f"{embedder._onnx_path().stem}{name}.onnx"
                for c in (torch_cache, built["cache"])]
        assert pair[0].exists() and pair[1].exists(), name
        hidden = [_hidden(p, batch) for p in pair]
        assert float(np.abs(hidden[0] - hidden[1]).max()) <= 1e-4, name


def _hidden(path: Path, batch: dict[str, np.ndarray]) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {i.name: batch[i.name]
                                         for i in session.get_inputs()})[0])
