"""Loading the model is quiet: a command's output is not interleaved with a progress bar."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

GM = str(Path(sys.executable).parent / "graphmem")


@pytest.mark.model
def test_a_command_that_loads_the_model_prints_no_progress_bar(tmp_path: Path) -> None:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    subprocess.run([GM, "init", "--data", str(tmp_path / "d")], check=True, env=env,
                   capture_output=True, timeout=120)
    done = subprocess.run([GM, "store", "--data", str(tmp_path / "d"), "-n", "ops",
                           "the deploy failed"], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Loading weights" not in done.stderr and "it/s" not in done.stderr, done.stderr


@pytest.mark.model
def test_progress_bars_stay_as_the_caller_left_them() -> None:
    from transformers.utils import logging as hf_logging

    from graphmem.engine.embedding import SentenceTransformerEmbedder

    hf_logging.enable_progress_bar()
    SentenceTransformerEmbedder().embed(["warm"])
    assert hf_logging.is_progress_bar_enabled()
