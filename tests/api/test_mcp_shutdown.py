"""`graphmem mcp` stopped by SIGTERM (a client host or a service manager stopping it) closes
its store before it exits, as `graphmem serve` does: the product codes saved with the last
write in them. It used to die at once, the store unclosed; a plain SIGTERM handler instead
hung, the interpreter's exit waiting on anyio's thread that reads stdin."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from graphmem import GraphMemory
from graphmem.testing import RandomEmbedder
from tests.api.test_serve_shutdown import CONFIG, _states


def _ask(proc: subprocess.Popen[bytes], id_: int, method: str, params: dict[str, Any]
         ) -> dict[str, Any]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": id_, "method": method,
                                  "params": params}) + "\n").encode())
    proc.stdin.flush()
    while True:  # notifications (logging) may come first
        message = json.loads(proc.stdout.readline())
        if message.get("id") == id_:
            return message


def test_sigterm_closes_the_store_of_an_mcp_server(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with GraphMemory.open(data, config=CONFIG, embedder=RandomEmbedder()) as mem:
        mem.store_many([f"note {i} on topic {i % 17}" for i in range(300)], namespace="ops")
    assert _states(data) == {"ops": "loaded"}

    gm = shutil.which("graphmem", path=str(Path(sys.executable).parent))
    assert gm
    env = {**os.environ, "GRAPHMEM_SCHEDULER": "false", "GRAPHMEM_TUNING__ANN_MIN": "200",
           "GRAPHMEM_EMBEDDING__VERIFY_STORE": "false"}
    log = tmp_path / "mcp.log"
    proc = subprocess.Popen([gm, "mcp", "--data", str(data)], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=log.open("w"))
    try:
        _ask(proc, 1, "initialize", {"protocolVersion": "2024-11-05", "capabilities": {},
                                     "clientInfo": {"name": "test", "version": "1"}})
        assert proc.stdin is not None
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        proc.stdin.flush()
        answer = _ask(proc, 2, "tools/call", {"name": "remember", "arguments": {
            "content": "written just before", "namespace": "ops"}})
        assert not answer["result"].get("isError"), answer
        written = json.loads(answer["result"]["content"][0]["text"])["id"]
    finally:
        proc.send_signal(signal.SIGTERM)  # stdin stays open: the client did not end it
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError("graphmem mcp hung after SIGTERM") from None
    assert proc.returncode == 128 + signal.SIGTERM, log.read_text()[-2000:]
    assert _states(data) == {"ops": "loaded"}  # saved at close with the write in them
    with GraphMemory.open(data, config=CONFIG, embedder=RandomEmbedder()) as mem:
        assert mem.get(written, namespace="ops").content == "written just before"
