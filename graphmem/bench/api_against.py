"""Another graphmem install's REST server under the same load, in the same run.

Issue 14 states its targets as "ratios against today measured in one run": this VM's speed
moves by a third within minutes, so a rate is read beside the code of an earlier day
measured minutes apart, not beside a number from another day. ``measure`` fills a store
with the other install's own code (its own file format), serves it with its own
``graphmem serve`` and drives it with this install's load generator, the one the main
measurement uses.

The other install is given by its Python interpreter (a virtual environment with graphmem
installed; ``bench/install-commit.sh`` makes one for a commit). Its server runs with its
own defaults: no ``GRAPHMEM_*`` variable of this process reaches it.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from graphmem.bench.api_load import _drive, _port, _wait_ready
from graphmem.errors import ConfigError, ValidationError

#: run by the other install's Python: the names it uses are the same in 8a3e052 (issue 14's
#: day) and since. Random vectors fill the store, as in the main measurement; an install
#: that checks the store's model (ADR 0025) is told not to.
_FILL = """
import json, sys
from datetime import UTC, datetime, timedelta
from importlib import metadata
from pathlib import Path
from graphmem import GraphMemory
from graphmem.api.keys import KeyStore
from graphmem.bench import synthetic
from graphmem.bench.scale import RandomEmbedder
from graphmem.config import EmbeddingConfig
folder, n = Path(sys.argv[1]), int(sys.argv[2])
then = datetime.now(UTC) - timedelta(days=40)
with GraphMemory.open(folder / "data", embedder=RandomEmbedder(), clock=lambda: then) as mem:
    records = synthetic.records(n)
    for i in range(0, n, 1000):
        mem.store_many(records[i:i + 1000], namespace="bench")
key = KeyStore(folder / "keys.db").create(["bench"], "writer")[1]
env = ({"GRAPHMEM_EMBEDDING__VERIFY_STORE": "false"}
       if "verify_store" in EmbeddingConfig.model_fields else {})
sys.stdout.write(json.dumps({"key": key, "env": env,
                             "version": metadata.version("graphmem")}) + "\\n")
"""


def check(python: str) -> None:
    """Before anything is filled: ``python`` must be an executable file."""
    if not Path(python).is_file() or not os.access(python, os.X_OK):
        raise ValidationError(f"--against {python}: not an executable Python")


def measure(python: str, n: int, *, clients: int, seconds: float, max_requests: int,
            progress: Callable[[str], Any]) -> dict[str, Any]:
    """The other install at ``n`` memories: searches with every query new and repeated."""
    check(python)
    python = os.path.abspath(python)  # it runs in the store's folder; a venv's link kept
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        progress(f"the install of {python}: filling {n} memories ...")
        filled = subprocess.run([python, "-c", _FILL, str(folder), str(n)], env=env,
                                cwd=folder, capture_output=True, text=True)
        said = filled.stdout.strip().splitlines()
        if filled.returncode != 0 or not said:
            last = (filled.stderr.strip().splitlines() or ["no message"])[-1]
            raise ConfigError(f"--against {python}: filling its store failed: {last}")
        made = json.loads(said[-1])
        port = _port()
        url = f"http://127.0.0.1:{port}"
        log = folder / "server.log"
        server_env = {**env, **made["env"], "GRAPHMEM_KEYS_FILE": str(folder / "keys.db"),
                      "GRAPHMEM_SCHEDULER": "false"}
        with open(log, "wb") as out:  # cwd: a ./graphmem folder here must not shadow it
            server = subprocess.Popen(
                [python, "-c", "from graphmem.cli import main; main()", "serve", "--data",
                 str(folder / "data"), "--port", str(port)],
                env=server_env, cwd=folder, stdout=out, stderr=subprocess.STDOUT)
        try:
            _wait_ready(url, server, log)
            httpx.post(f"{url}/v1/search", json={"namespace": "bench", "query": "warm up"},
                       headers={"Authorization": f"Bearer {made['key']}"}, timeout=120)
            result: dict[str, Any] = {"python": python, "version": made["version"], "n": n}
            for kind in ("search_distinct", "search"):
                progress(f"the install of {python}: {kind}, {clients} clients for "
                         f"{seconds:g} s ...")
                result[kind] = _drive(url, made["key"], kind, clients, seconds,
                                      max_requests, server_pid=server.pid)
            stats = httpx.get(f"{url}/v1/stats", params={"namespace": "bench"}, timeout=60,
                              headers={"Authorization": f"Bearer {made['key']}"}).json()
            result["stored"] = stats.get("memories")
            return result
        finally:
            server.terminate()
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
