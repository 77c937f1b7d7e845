"""Starts the Maven-built Neo4j 5 launcher (``tests/neo4j``) for the test run: resolves the
harness from Maven Central (cached in ~/.m2), compiles ``Launcher.java`` with javac, runs it,
and reads the Bolt URI it prints. Stopped with SIGTERM (or by closing its stdin)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def unavailable() -> str | None:
    """Why a Neo4j cannot be started here, or None."""
    for tool in ("java", "javac", "mvn"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (Neo4j runs from Maven Central artifacts)"
    return None


class Neo4jServer:
    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.uri = ""

    def _classpath(self) -> str:
        target = HERE / "target"
        cp_file = target / "classpath.txt"
        if not cp_file.exists() or cp_file.stat().st_mtime < (HERE / "pom.xml").stat().st_mtime:
            subprocess.run(["mvn", "-q", "-B", "dependency:build-classpath",
                            f"-Dmdep.outputFile={cp_file}"], cwd=HERE, check=True,
                           timeout=1200)
        classes = target / "classes"
        source = HERE / "src" / "main" / "java" / "graphmem" / "Launcher.java"
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
            ["java", "-Xmx1g", "-cp", cp, "graphmem.Launcher"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the Neo4j launcher exited ({self.proc.poll()})")
            if line.startswith("BOLT "):
                self.uri = line.split()[1].rstrip("/")
                return self.uri
        raise RuntimeError("the Neo4j launcher printed no Bolt URI in time")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc = None
