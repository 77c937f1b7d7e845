"""`graphmem serve` stopped by SIGTERM (how Docker, systemd and Kubernetes stop it) closes its
store before it exits. uvicorn shuts down on the signal and then raises it again, which used
to kill the process before the store closed: the faiss indexes were not saved, so every
restart after a write rebuilt them (minutes of slower answers at 1M), and queued access
bookkeeping was lost."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import numpy as np

from graphmem import GraphMemory
from graphmem.api.keys import KeyStore
from graphmem.config import GraphMemConfig, TuningConfig
from graphmem.store.sqlite.store import SQLiteStore
from graphmem.testing import RandomEmbedder
from tests.api.test_rest import _free_port, _wait_ready

CONFIG = GraphMemConfig(tuning=TuningConfig(ann_min=200, ann_build_in_background=False))


def _states(data: Path) -> dict[str, str]:
    with GraphMemory.open(data, config=CONFIG, embedder=RandomEmbedder()) as mem:
        assert isinstance(mem.backend, SQLiteStore)
        mem.backend.similarities("ops", [], np.zeros(384, np.float32))  # loaded on first use
        return mem.backend.ann_states()


def test_sigterm_closes_the_store_and_the_codes_are_loaded_at_the_next_start(
        tmp_path: Path) -> None:
    data = tmp_path / "data"
    with GraphMemory.open(data, config=CONFIG, embedder=RandomEmbedder()) as mem:
        mem.store_many([f"note {i} on topic {i % 17}" for i in range(300)], namespace="ops")
    assert _states(data) == {"ops": "loaded"}  # a closed store's codes load, not rebuild

    gm = shutil.which("graphmem", path=str(Path(sys.executable).parent))
    assert gm
    keys = tmp_path / "keys.db"
    key = KeyStore(keys).create(["ops"], "writer")[1]
    port = _free_port()
    env = {**os.environ, "GRAPHMEM_KEYS_FILE": str(keys), "GRAPHMEM_SCHEDULER": "false",
           "GRAPHMEM_TUNING__ANN_MIN": "200",
           # random vectors in the store, the real model in the server (as the REST bench)
           "GRAPHMEM_EMBEDDING__VERIFY_STORE": "false"}
    log = tmp_path / "serve.log"
    proc = subprocess.Popen([gm, "serve", "--data", str(data), "--port", str(port)],
                            env=env, stdout=subprocess.DEVNULL, stderr=log.open("w"))
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_ready(proc, url, log)
        written = httpx.post(f"{url}/v1/memories", json={"namespace": "ops",
                                                         "content": "written just before"},
                             headers={"Authorization": f"Bearer {key}"}, timeout=60)
        assert written.status_code == 201
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, log.read_text()[-2000:]
    assert _states(data) == {"ops": "loaded"}  # saved at close with the write in them
    with GraphMemory.open(data, config=CONFIG, embedder=RandomEmbedder()) as mem:
        assert mem.get(written.json()["id"], namespace="ops").content == "written just before"

