"""Starts the Maven-built Neo4j 5 launcher (``tests/neo4j`` in a source checkout) for the tests
and the benchmarks: resolves the harness from Maven Central (cached in ~/.m2), compiles
``Launcher.java`` with javac, runs it, and reads the data folder and Bolt URI it prints.
Stopped with SIGTERM (or by closing its stdin); a temporary folder goes with it. A
development tool: the service itself connects to any Neo4j 5."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

MODULE = Path(__file__).resolve().parents[2] / "tests" / "neo4j"


def unavailable(module: Path = MODULE) -> str | None:
    """Why a Neo4j cannot be started here, or None."""
    if not (module / "pom.xml").exists():
        return f"no Neo4j launcher module at {module} (it ships with the source checkout)"
    for tool in ("java", "javac", "mvn"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Neo4j runs from Maven Central artifacts)"
    return None


class Neo4jServer:
    """``home``: the server's data folder (kept, e.g. to measure its size); a temporary one,
    removed by the server, when None.

    Example:
        >>> with Neo4jServer() as server:  # doctest: +SKIP
        ...     print(server.uri)
        bolt://127.0.0.1:...
    """

    def __init__(self, home: Path | None = None, *, module: Path = MODULE,
                 heap: str = "1g") -> None:
        self.home, self.module, self.heap = home, module, heap
        self.proc: subprocess.Popen[str] | None = None
        self.uri = ""
        self.folder: Path | None = None  # the data folder the server reports (HOME line)

    def _classpath(self) -> str:
        target = self.module / "target"
        cp_file = target / "classpath.txt"
        pom = self.module / "pom.xml"
        if not cp_file.exists() or cp_file.stat().st_mtime < pom.stat().st_mtime:
            subprocess.run(["mvn", "-q", "-B", "dependency:build-classpath",
                            f"-Dmdep.outputFile={cp_file}"], cwd=self.module, check=True,
                           timeout=1200)
        classes = target / "classes"
        source = self.module / "src" / "main" / "java" / "graphmem" / "Launcher.java"
        built = classes / "graphmem" / "Launcher.class"
        deps = cp_file.read_text().strip()
        if not built.exists() or built.stat().st_mtime < source.stat().st_mtime:
            classes.mkdir(parents=True, exist_ok=True)
            subprocess.run(["javac", "-d", str(classes), "-cp", deps, str(source)],
                           check=True, timeout=300)
        return f"{classes}{os.pathsep}{deps}"

    def start(self, timeout: float = 180) -> str:
        cp = self._classpath()
        self.proc = subprocess.Popen(
            ["java", f"-Xmx{self.heap}", "-cp", cp, "graphmem.Launcher",
             *([str(self.home)] if self.home is not None else [])], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the Neo4j launcher exited ({self.proc.poll()})")
            if line.startswith("HOME "):
                self.folder = Path(line[5:].rstrip("\n"))
            if line.startswith("BOLT "):
                self.uri = line.split()[1].rstrip("/")
                return self.uri
        raise RuntimeError("the Neo4j launcher printed no Bolt URI in time")

    def __enter__(self) -> Neo4jServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc = None
