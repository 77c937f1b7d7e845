"""The TypeScript client (clients/typescript): `npm test` starts a real `graphmem serve`,
regenerates the client's types from its /openapi.json, type-checks the wrapper and its tests
with tsc (a route or schema change breaks the build) and runs them with node's test runner."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "typescript"


def test_npm_test_passes_against_a_real_server() -> None:
    npm = shutil.which("npm")
    assert npm, "npm (Node 20) is required for the TypeScript client's tests"
    assert (CLIENT / "node_modules" / "openapi-typescript").exists(), (
        "run `npm ci --prefix clients/typescript` (make test does)")
    graphmem = shutil.which("graphmem", path=str(Path(sys.executable).parent))
    assert graphmem, "graphmem is not installed beside this interpreter"
    # the server is this interpreter's graphmem, so the types are this checkout's API
    env = {**os.environ, "GRAPHMEM_BIN": graphmem}
    done = subprocess.run([npm, "test", "--prefix", str(CLIENT)], env=env, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, f"npm test failed:\n{done.stdout[-8000:]}\n{done.stderr[-4000:]}"
    assert "# fail 0" in done.stdout and "# pass " in done.stdout, done.stdout[-4000:]
