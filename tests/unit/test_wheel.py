"""The wheel holds what the installed product needs (SPEC §2): the package-dir mapping puts
api/, consolidation/ and cypher/ under ``graphmem``, with their data files, and nothing as a
bare top-level package."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, set[str]]:
    """The build's output and the wheel's file names, built once from a copy of the tracked
    files (pip builds in the tree: a checkout's stale build/lib would leak into the wheel)."""
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("wheel")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.split("\0")
    for name in filter(None, tracked):
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                            str(out), str(src)], check=True, capture_output=True,
                           text=True, timeout=300)
    [whl] = out.glob("graphmem-*.whl")
    return built.stdout + built.stderr, set(zipfile.ZipFile(whl).namelist())


def test_the_wheel_ships_the_viewer_the_statements_and_the_templates(
        wheel: tuple[str, set[str]]) -> None:
    output, names = wheel
    # a data folder missing from pyproject's packages is shipped with a warning per folder
    assert "warning" not in output.lower(), output[-4000:]
    for needed in ("graphmem/api/viewer/static/viewer.html",
                   "graphmem/api/viewer/static/viewer.js",
                   "graphmem/api/viewer/static/viewer.css",
                   "graphmem/api/viewer/static/vendor/VENDORED.md",
                   "graphmem/api/viewer/static/vendor/cytoscape/cytoscape.min.js",
                   "graphmem/api/viewer/static/vendor/cytoscape/LICENSE",
                   "graphmem/api/viewer/static/vendor/swagger-ui/swagger-ui-bundle.js",
                   "graphmem/api/viewer/static/vendor/swagger-ui/LICENSE",
                   "graphmem/api/viewer/static/vendor/redoc/redoc.standalone.js",
                   "graphmem/api/viewer/static/vendor/redoc/LICENSE",
                   "graphmem/cypher/memory/transitions_recent.cypher",
                   "graphmem/consolidation/templates/report.html.j2",
                   "graphmem/engine/retrieval.py", "graphmem/rules/scoring.py",
                   "graphmem/client/http.py", "graphmem/store/sqlite/keyfile.py"):
        assert needed in names, f"the wheel lacks {needed}"
    tops = {n.split("/", 1)[0] for n in names if not n.split("/", 1)[0].endswith(".dist-info")}
    assert tops == {"graphmem"}, tops


def test_the_wheel_leaves_the_benchmarks_out(wheel: tuple[str, set[str]]) -> None:
    _, names = wheel
    assert "graphmem/cli/__init__.py" in names
    assert not [n for n in names if n.startswith("graphmem/bench/")]


def test_graphmem_bench_without_the_benchmarks_says_so_in_one_line() -> None:
    """An install from the wheel has no graphmem.bench: the command exits 1 with one line."""
    code = ("import sys\n"
            "class Gone:  # as in a wheel: no graphmem/bench folder\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        if name == 'graphmem.bench':\n"
            "            raise ModuleNotFoundError(name, name=name)\n"
            "sys.meta_path.insert(0, Gone())\n"
            "from graphmem.cli import main\n"
            "main(['bench', 'scale', '--n', '10'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().count("\n") == 0 and "source checkout" in done.stderr
