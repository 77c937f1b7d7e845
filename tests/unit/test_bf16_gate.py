"""Which CPUs embed batches in bfloat16 (ADR 0049), read without torch."""

from __future__ import annotations

import json
from pathlib import Path

from graphmem.config import TuningConfig
from graphmem.engine import model_folder
from graphmem.engine.bf16_embedding import Bf16Transformer, cpu_flags, supported


def test_the_flags_come_from_the_first_processor(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Xeon\n"
                    "flags\t\t: fpu avx512f amx_bf16 amx_tile avx512_bf16\n\n"
                    "processor\t: 1\nflags\t\t: fpu\n", encoding="ascii")
    assert cpu_flags(str(info)) == {"fpu", "avx512f", "amx_bf16", "amx_tile", "avx512_bf16"}
    assert cpu_flags(str(tmp_path / "missing")) == frozenset()


def test_only_amx_makes_bfloat16_faster() -> None:
    # measured (ADR 0049): AMX ~1070 texts/s, AVX512-BF16 alone 271, emulated 105; float 270
    assert supported(frozenset({"amx_tile", "amx_bf16", "avx512f"}))
    assert not supported(frozenset({"avx512f", "avx512_bf16", "amx_tile"}))
    assert not supported(frozenset())


def test_the_transformer_is_the_folders_first_module(tmp_path: Path) -> None:
    (tmp_path / "modules.json").write_text(json.dumps([
        {"idx": 1, "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 0, "path": "0_Transformer",
         "type": "sentence_transformers.models.Transformer"}]), encoding="utf-8")
    assert model_folder.transformer_folder(tmp_path) == tmp_path / "0_Transformer"


def test_constructing_loads_nothing(tmp_path: Path) -> None:
    t = Bf16Transformer(tmp_path, threads=2)
    assert not t.loaded and t.threads == 2


def test_the_config_turns_it_off_and_sets_the_smallest_batch() -> None:
    from graphmem.engine.onnx_embedding import OnnxEmbedder

    assert TuningConfig().bf16_batches and OnnxEmbedder.bf16_min_batch == 8
    assert not TuningConfig(bf16_batches=False).bf16_batches
