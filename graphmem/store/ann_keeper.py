"""When the embedded store's namespaces get HNSW graphs, and how they outlive the process.

A namespace with at least ``StoreConfig.ann_min`` vectors gets two graphs (content, context),
built from a snapshot of its rows in a background thread while the exact scan keeps
answering; writes during the build are replayed into the graphs before they serve. A graph
serves only if it passes a self-check at build or load: the top-10 of ``_CHECK`` of the
namespace's own vectors (probes) must agree with the exact scan for >= ``ann_min_recall``; on
data without neighbourhoods (random vectors) it does not, and the exact scan stays.

Graphs are saved at ``close`` under ``<folder>/ann/`` with a sidecar recording the namespace's
vector epoch (a counter every write that changes vectors bumps in the same transaction). At
``open`` they are loaded when the epoch, the counts and a sample of vectors agree with SQLite;
otherwise (a crash after writes, a missing or damaged file) they are built again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.config import StoreConfig
from graphmem.store.ann import HnswField
from graphmem.store.vectors import VectorIndex

log = logging.getLogger(__name__)

_CHECK = 64  # probes of the self-check
_CHUNK = 20_000  # rows added per call while building (a close stops between chunks)


def epoch_key(namespace: str) -> str:
    return "vec_epoch:" + namespace


def read_epoch(conn: sqlite3.Connection, namespace: str) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (epoch_key(namespace),)).fetchone()
    return int(row[0]) if row else 0


def bump_epoch(conn: sqlite3.Connection, namespace: str) -> None:
    """In the writing transaction: the namespace's saved graphs are out of date from now on."""
    conn.execute("INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key) DO UPDATE "
                 "SET value = CAST(value AS INTEGER) + 1", (epoch_key(namespace),))


class GraphKeeper:
    """Builds, checks, saves and loads the HNSW graphs of one SQLite store's namespaces.

    Example:
        >>> import tempfile
        >>> keeper = GraphKeeper(Path(tempfile.mkdtemp()), 384, StoreConfig())  # no I/O
        >>> keeper.config.ann_min
        20000
    """

    def __init__(self, folder: Path, dim: int, config: StoreConfig) -> None:
        self.folder = folder / "ann"
        self.dim = dim
        self.config = config
        self.state: dict[str, str] = {}  # namespace -> loaded | built | building | exact
        #: namespace -> size below which the exact scan stays (a failed self-check)
        self.exact_until: dict[str, int] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._stop = threading.Event()

    def _paths(self, namespace: str) -> tuple[Path, Path, Path]:
        stem = hashlib.blake2b(namespace.encode(), digest_size=8).hexdigest()
        return (self.folder / f"{stem}.content.usearch", self.folder / f"{stem}.context.usearch",
                self.folder / f"{stem}.json")

    def wanted(self, ns: str, index: VectorIndex) -> bool:
        n = len(index)
        return self.config.ann_min > 0 and n >= max(self.config.ann_min,
                                                    self.exact_until.get(ns, 0))

    # open -----------------------------------------------------------------------------------
    def after_open(self, conn: sqlite3.Connection, lock: Any,
                   vectors: dict[str, VectorIndex]) -> None:
        self._stop.clear()
        for ns, index in vectors.items():
            self._read_verdict(ns)
            if not self.wanted(ns, index):
                if self.config.ann_min and ns in self.exact_until:
                    self.state[ns] = "exact"
                continue
            graphs = self._load(conn, ns, index)
            if graphs is not None:
                index.install(graphs)
                index.changed = False
                self.state[ns] = "loaded"
            else:
                self.start_build(ns, index, lock)

    def _load(self, conn: sqlite3.Connection, ns: str,
              index: VectorIndex) -> dict[str, HnswField] | None:
        content_path, context_path, side_path = self._paths(ns)
        try:
            side = json.loads(side_path.read_text())
            if ("exact_until" in side or side.get("namespace") != ns
                    or side.get("epoch") != read_epoch(conn, ns) or side.get("dim") != self.dim):
                log.info("HNSW graphs of a namespace are out of date: rebuilding")
                return None
            graphs = {"content": HnswField.load(content_path, self.dim,
                                                ef_search=self.config.ann_ef),
                      "context": HnswField.load(context_path, self.dim,
                                                ef_search=self.config.ann_ef)}
        except (OSError, ValueError, RuntimeError) as exc:
            log.info("HNSW graphs not loaded (%s): rebuilding", type(exc).__name__)
            return None
        if (len(graphs["content"]) != len(index)
                or len(graphs["context"]) != index.context_count()
                or not self._sample_agrees(index, graphs)):
            log.warning("saved HNSW graphs disagree with the database: rebuilding")
            return None
        return graphs

    def _sample_agrees(self, index: VectorIndex, graphs: dict[str, HnswField]) -> bool:
        pks = index.pks()
        rng = np.random.default_rng(len(pks))
        for pk in rng.choice(pks, size=min(32, len(pks)), replace=False).tolist():
            rows = index.row_vectors(int(pk))
            stored = graphs["content"].vector(int(pk))
            if rows is None or stored is None or float(stored @ rows[0]) < 0.999:
                return False
            ctx = graphs["context"].vector(int(pk))
            if (rows[1] is None) != (ctx is None) or (
                    ctx is not None and rows[1] is not None and float(ctx @ rows[1]) < 0.999):
                return False
        return True

    # build ----------------------------------------------------------------------------------
    def after_write(self, ns: str, index: VectorIndex, lock: Any) -> None:
        if index.ann is None and index.pending is None and self.wanted(ns, index):
            self.start_build(ns, index, lock)

    def start_build(self, ns: str, index: VectorIndex, lock: Any) -> None:
        with lock:
            snapshot = index.snapshot()
        self.state[ns] = "building"
        if not self.config.ann_build_in_background:
            self._build(ns, index, lock, snapshot)
            return
        thread = threading.Thread(target=self._build, args=(ns, index, lock, snapshot),
                                  name=f"graphmem-hnsw-{len(self._threads)}", daemon=True)
        self._threads[ns] = thread
        thread.start()

    def _build(self, ns: str, index: VectorIndex, lock: Any,
               snapshot: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]) -> None:
        pks, content, context, has_context = snapshot
        c = self.config
        graphs = {f: HnswField(self.dim, connectivity=c.ann_connectivity, ef_add=c.ann_ef_add,
                               ef_search=c.ann_ef) for f in ("content", "context")}
        recall = 0.0
        try:
            for start in range(0, len(pks), _CHUNK):
                if self._stop.is_set():
                    with lock:
                        index.drop_graphs()
                    return
                part = slice(start, start + _CHUNK)
                graphs["content"].add(pks[part], content[part])
                keep = has_context[part]
                graphs["context"].add(pks[part][keep], context[part][keep])
                done = min(len(pks), start + _CHUNK)
                if start == 0 or done == len(pks):
                    # checked on the first chunk already: no neighbourhoods, no long build
                    recall = self_check(graphs["content"], pks[:done], content[:done])
                    if recall < c.ann_min_recall:
                        break
        except Exception:  # a failed build leaves the exact scan serving
            log.exception("building an HNSW graph failed: the exact scan serves")
            with lock:
                index.drop_graphs()
                self.state[ns] = "exact"
            return
        with lock:
            if self._stop.is_set():
                index.drop_graphs()
                return
            if recall < c.ann_min_recall:
                log.info("HNSW self-check recall %.3f below %.3f: the exact scan serves",
                         recall, c.ann_min_recall)
                index.drop_graphs()
                self.state[ns] = "exact"
                self.exact_until[ns] = 2 * len(pks)  # checked again when it has doubled
                self._write_verdict(ns)
                return
            index.install(graphs)
            index.changed = True
            self.state[ns] = "built"
        log.info("HNSW graphs built for a namespace of %d vectors (self-check %.3f)",
                 len(pks), recall)

    def _read_verdict(self, ns: str) -> None:
        try:
            side = json.loads(self._paths(ns)[2].read_text())
        except (OSError, ValueError):
            return
        if side.get("namespace") == ns and "exact_until" in side:
            self.exact_until[ns] = int(side["exact_until"])

    def _write_verdict(self, ns: str) -> None:
        """Remember a failed self-check across restarts (no graph is saved for it)."""
        content_path, context_path, side_path = self._paths(ns)
        try:
            self.folder.mkdir(mode=0o700, exist_ok=True)
            content_path.unlink(missing_ok=True)
            context_path.unlink(missing_ok=True)
            side_path.write_text(json.dumps({"namespace": ns,
                                             "exact_until": self.exact_until[ns]}))
            os.chmod(side_path, 0o600)
        except OSError as exc:
            log.warning("could not record the HNSW verdict: %s", exc)

    def wait(self, timeout: float | None = None) -> None:
        """Until the running builds end (tests, benchmarks)."""
        for thread in list(self._threads.values()):
            thread.join(timeout)

    # close ----------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the running builds (between chunks) and wait for them; call without holding
        the store's lock, which a finishing build takes."""
        self._stop.set()
        self.wait()
        self._threads.clear()

    def save(self, conn: sqlite3.Connection, vectors: dict[str, VectorIndex]) -> None:
        """Save the graphs that serve and changed since loaded (after ``stop``)."""
        for ns, index in vectors.items():
            if index.ann is None:
                continue
            content_path, context_path, side_path = self._paths(ns)
            if not index.changed and side_path.exists():
                continue
            try:
                self.folder.mkdir(mode=0o700, exist_ok=True)
                side_path.unlink(missing_ok=True)  # no sidecar while the graphs are replaced
                index.ann["content"].save(content_path)
                index.ann["context"].save(context_path)
                tmp = side_path.with_suffix(".tmp")
                tmp.write_text(json.dumps({"namespace": ns, "epoch": read_epoch(conn, ns),
                                           "dim": self.dim, "vectors": len(index)}))
                os.chmod(tmp, 0o600)
                os.replace(tmp, side_path)  # last: the graphs before it are whole
                index.changed = False
            except OSError as exc:  # the graphs are a cache: the next open rebuilds them
                log.warning("could not save HNSW graphs: %s", exc)
        self.state.clear()


def self_check(graph: HnswField, pks: np.ndarray, content: np.ndarray, k: int = 10) -> float:
    """Recall@k, against the exact scan, of what the store serves from the graph (over-fetch,
    re-score with the float32 rows) for ``_CHECK`` of the namespace's own vectors as probes,
    the probe itself left out of both lists."""
    n = content.shape[0]
    if n <= k + 1:
        return 1.0
    row_of = {int(pk): row for row, pk in enumerate(pks.tolist())}
    rng = np.random.default_rng(n)
    hits = []
    for i in rng.choice(n, size=min(_CHECK, n), replace=False).tolist():
        scores = content @ content[i]
        scores[i] = -np.inf
        exact = {int(pks[j]) for j in np.argpartition(-scores, k)[:k]}
        keys, _ = graph.search(content[i], max(4 * k, 64))
        rows = [row_of[key] for key in keys.tolist() if key in row_of and row_of[key] != i]
        best = sorted(rows, key=lambda r: -float(scores[r]))[:k]
        hits.append(len({int(pks[r]) for r in best} & exact) / k)
    return float(np.mean(hits))
