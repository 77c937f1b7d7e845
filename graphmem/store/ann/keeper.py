"""When the embedded store's namespaces get product codes, and how they outlive the process.

A namespace with at least ``StoreConfig.ann_min`` vectors gets codes for both fields (content,
context; ``pq_codes``), trained and filled from a snapshot of its rows in a background thread
while the exact scan keeps answering; writes during the build are replayed into the codes
before they serve. Codes serve only if they pass a self-check at build: the top-10 of
``_CHECK`` of the namespace's own vectors (probes) must agree with the exact scan for
>= ``ann_min_recall`` (less a standard error, ADR 0052) with ``ann_candidates`` re-scored per
query, or twice, four times ...
that, up to ``MAX_FETCH`` (the fewest that pass are kept); otherwise the exact scan stays.
Codes with inverted lists start at ``ann_list_candidates`` instead (ADR 0055): a stored
vector's own list is always probed, so the probes pass counts too low for real questions.

Codes are rebuilt (in the background, the old ones serving meanwhile) when stale codes (of
deleted or re-embedded rows) pass ``_STALE_SHARE`` of the live ones, or when the namespace has
doubled since the codes were trained. They are saved at ``close`` under ``<folder>/ann/`` with
a sidecar recording the namespace's vector epoch (a counter every write that changes vectors
bumps in the same transaction); at ``open`` they are loaded when the epoch, the counts and a
sample of rows agree with SQLite, and built again otherwise.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from graphmem.config import StoreConfig
from graphmem.store.ann import pq_codes
from graphmem.store.ann.asked_queries import learn, recall_at, reference
from graphmem.store.ann.compact_rows import encode_chunk, steps_of
from graphmem.store.ann.pq_codes import CodeField
from graphmem.store.ann.vectors import MAX_FETCH, VectorIndex

log = logging.getLogger(__name__)

_CHECK = 512  # probes of the self-check (ADR 0052: 64 left it a coin toss near the bar)
_MARGIN_SE = 1.0  # standard errors the probes' recall must clear the bar by (ADR 0052)
_SAMPLE = 16  # rows whose own key the loaded codes must find
_CHUNK = 100_000  # rows added per call while building (a close stops between chunks)
_STALE_SHARE = 0.25  # stale codes past this share of the rows: rebuild
_FILL_CHUNK = 16_384  # rows encoded into the resident copies per turn of the lock
FIELDS = ("content", "context")
#: sidecars of another index (the HNSW graphs before ADR 0019) and their verdicts are ignored
FORMAT = "faiss-pq-fastscan-1"


def epoch_key(namespace: str) -> str:
    return "vec_epoch:" + namespace


def read_epoch(conn: sqlite3.Connection, namespace: str) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (epoch_key(namespace),)).fetchone()
    return int(row[0]) if row else 0


def bump_epoch(conn: sqlite3.Connection, namespace: str) -> None:
    """In the writing transaction: the namespace's saved codes are out of date from now on."""
    conn.execute("INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key) DO UPDATE "
                 "SET value = CAST(value AS INTEGER) + 1", (epoch_key(namespace),))


class AnnKeeper:
    """Builds, checks, saves and loads the product codes of one SQLite store's namespaces.

    Example:
        >>> import tempfile
        >>> keeper = AnnKeeper(Path(tempfile.mkdtemp()), 384, StoreConfig())  # no I/O
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
        #: namespace -> rows the serving codes were trained on
        self.trained_on: dict[str, int] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._stop = threading.Event()
        #: ``time.monotonic()`` of the last question or write (the store's foreground)
        self._busy_at = 0.0

    def _paths(self, namespace: str) -> tuple[Path, Path, Path]:
        stem = hashlib.blake2b(namespace.encode(), digest_size=8).hexdigest()
        return (self.folder / f"{stem}.content.faiss", self.folder / f"{stem}.context.faiss",
                self.folder / f"{stem}.json")

    def wanted(self, ns: str, index: VectorIndex) -> bool:
        n = len(index)
        return self.config.ann_min > 0 and n >= max(self.config.ann_min,
                                                    self.exact_until.get(ns, 0))

    # open -----------------------------------------------------------------------------------
    def after_open(self, conn: sqlite3.Connection, lock: Any,
                   vectors: dict[str, VectorIndex]) -> None:
        self._stop.clear()
        for old in self.folder.glob("*.usearch"):  # the HNSW graphs before ADR 0019
            old.unlink(missing_ok=True)
        for ns, index in vectors.items():
            self._read_verdict(ns)
            if not self.wanted(ns, index):
                if self.config.ann_min and ns in self.exact_until:
                    self.state[ns] = "exact"
                continue
            loaded = self._load(conn, ns, index)
            if loaded is not None:
                codes, candidates = loaded
                index.install(codes, max(candidates, self.least(codes)))
                index.changed = False
                self.state[ns] = "loaded"
                if len(index) >= pq_codes.IVF_MIN and not codes["content"].lists:
                    # saved flat before ADR 0031: they serve while lists are built (the
                    # build fills the int8 copies after it)
                    log.info("product codes of %d vectors get inverted lists: rebuilding",
                             len(index))
                    self.start_build(ns, index, lock)
                    continue
                self.start_fill(ns, index, lock)
            else:
                self.start_build(ns, index, lock)

    def _load(self, conn: sqlite3.Connection, ns: str, index: VectorIndex
              ) -> tuple[dict[str, CodeField], int] | None:
        content_path, context_path, side_path = self._paths(ns)
        try:
            side = json.loads(side_path.read_text())
            if ("exact_until" in side or side.get("namespace") != ns
                    or side.get("format") != FORMAT
                    or side.get("epoch") != read_epoch(conn, ns) or side.get("dim") != self.dim):
                log.info("product codes of a namespace are out of date: rebuilding")
                return None
            codes = {"content": CodeField.load(content_path, self.dim),
                     "context": CodeField.load(context_path, self.dim)}
        except (OSError, ValueError) as exc:
            log.info("product codes not loaded (%s): rebuilding", type(exc).__name__)
            return None
        candidates = int(side.get("candidates", 0))
        if (side.get("vectors") != len(index) or side.get("contexts") != index.context_count()
                or [len(codes[f]) for f in FIELDS] != side.get("codes")
                or not 0 < candidates <= MAX_FETCH
                or not self._sample_agrees(index, codes, candidates)):
            log.warning("saved product codes disagree with the database: rebuilding")
            return None
        self.trained_on[ns] = int(side.get("trained_on", len(index)))
        index.learned = min(int(side.get("learned", 0)), MAX_FETCH)
        return codes, candidates

    @staticmethod
    def _sample_agrees(index: VectorIndex, codes: dict[str, CodeField],
                       candidates: int) -> bool:
        """Each of a few sampled rows finds its own key among its candidates, in both
        fields: codes made for other vectors would not."""
        pks = index.pks()
        rng = np.random.default_rng(len(pks))
        sample = rng.choice(pks, size=min(_SAMPLE, len(pks)), replace=False).tolist()
        rows = [index.row_vectors(int(pk)) for pk in sample]
        if any(r is None for r in rows):
            return False
        for f, field in enumerate(FIELDS):
            pairs = [(pk, r[f]) for pk, r in zip(sample, rows, strict=True)
                     if r is not None and r[f] is not None]
            keys = [pk for pk, _ in pairs]
            vecs = [v for _, v in pairs if v is not None]
            if not keys:
                continue
            found = codes[field].search_many(np.stack(vecs), candidates)
            if any(key not in got for key, got in zip(keys, found, strict=True)):
                return False
        return True

    # build ----------------------------------------------------------------------------------
    def after_write(self, ns: str, index: VectorIndex, lock: Any) -> None:
        self._busy_at = time.monotonic()
        if index.pending is not None or not self.wanted(ns, index):
            return
        if index.ann is None:
            self.start_build(ns, index, lock)
        elif (index.stale() > _STALE_SHARE * (len(index) + index.context_count())
              or len(index) >= 2 * self.trained_on.get(ns, len(index))):
            log.info("rebuilding product codes (stale %d, rows %d)", index.stale(), len(index))
            self.start_build(ns, index, lock)  # the old codes serve until the new install

    def least(self, codes: dict[str, CodeField]) -> int:
        """The fewest candidates ``codes`` serve with: ``ann_candidates``, and with inverted
        lists at least ``ann_list_candidates`` (ADR 0055). The self-check's probes are stored
        vectors, whose own list is always probed: at 1M MiniLM memories it passed 250
        candidates that held 0.953 of real questions' exact top-10 (1,000: 0.997)."""
        c = self.config
        if codes["content"].lists:
            return max(c.ann_candidates, c.ann_list_candidates)
        return c.ann_candidates

    def start_build(self, ns: str, index: VectorIndex, lock: Any) -> None:
        with lock:
            snapshot = index.snapshot()
        if index.ann is None:
            self.state[ns] = "building"
        if not self.config.ann_build_in_background:
            self._build(ns, index, lock, snapshot)
            return
        thread = threading.Thread(target=self._build, args=(ns, index, lock, snapshot),
                                  name=f"graphmem-codes-{len(self._threads)}", daemon=True)
        self._threads[ns] = thread
        thread.start()

    def _build(self, ns: str, index: VectorIndex, lock: Any,
               snapshot: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]) -> None:
        pks, content, context, has_context = snapshot
        c = self.config
        codes = {f: CodeField(self.dim) for f in FIELDS}
        try:
            codes["content"].train(content)
            codes["context"].train(context[has_context] if has_context.any() else content)
            for start in range(0, len(pks), _CHUNK):
                if self._stop.is_set():
                    break
                part = slice(start, start + _CHUNK)
                codes["content"].add(pks[part], content[part])
                keep = has_context[part]
                codes["context"].add(pks[part][keep], context[part][keep])
            candidates = None if self._stop.is_set() else self_check(
                codes["content"], pks, content, self.least(codes), c.ann_min_recall)
        except Exception:  # a failed build leaves the exact scan serving
            log.exception("building product codes failed: the exact scan serves")
            with lock:
                if index.ann is None:
                    index.drop_ann()
                    self.state[ns] = "exact"
                index.pending = None
            return
        with lock:
            if self._stop.is_set():
                index.pending = None
                return
            if candidates is None:
                log.info("product codes miss the exact top-10 even with %d candidates: the "
                         "exact scan serves", MAX_FETCH)
                index.drop_ann()
                self.state[ns] = "exact"
                self.exact_until[ns] = 2 * len(pks)  # checked again when it has doubled
                self._write_verdict(ns)
                return
            index.install(codes, candidates)
            index.changed = True
            self.trained_on[ns] = len(pks)
            self.state[ns] = "built"
        log.info("product codes built for a namespace of %d vectors (%d candidates)",
                 len(pks), candidates)
        self._fill(index, lock)

    # questions ------------------------------------------------------------------------------
    def after_query(self, ns: str, index: VectorIndex, query: np.ndarray, lock: Any) -> None:
        """Record a question asked of the codes; when a check is due (``asked_queries``),
        check the candidates against the recorded questions in a background thread."""
        self._busy_at = time.monotonic()
        asked = index.asked
        if index.ann is None or asked is None or not asked.add(query):
            return
        if not self.config.ann_build_in_background:  # reads only: inside the caller's read
            self.check_asked(index, lock)
            return
        key = ns + "#asked"
        running = self._threads.get(key)
        if running is not None and running.is_alive():
            return
        thread = threading.Thread(target=self.check_asked, args=(index, lock),
                                  name=f"graphmem-asked-{len(self._threads)}", daemon=True)
        self._threads[key] = thread
        thread.start()

    def check_asked(self, index: VectorIndex, lock: Any) -> None:
        """Raise the candidates until the codes' answers hold ``ann_min_recall`` of the
        recorded questions' exact top-10 (ADR 0027). Under reads of the store's lock, each
        brief: a block of the reference scan, one answer; a closing store stops it there.
        In the background each of those steps first waits for a quiet store (ADR 0032)."""
        background = self.config.ann_build_in_background
        deadline = time.monotonic() + self.config.ann_check_patience_s

        def read() -> Any:
            if background:
                self._wait_quiet(deadline)
            if self._stop.is_set():
                raise _Stopped
            return lock.read()

        def answer(q: np.ndarray, count: int) -> list[str]:
            with read():
                return [i for i, _ in index.topk(q, 10, candidate_count=count)]

        try:
            asked = index.asked
            if asked is None or index.ann is None:
                return
            if background:
                lowest_priority()  # the questions being answered meanwhile come first
            queries = asked.take()
            began = time.perf_counter()
            # one BLAS thread: OpenBLAS's workers are not niced and spin after a product,
            # taking the cores from the queries (a retrieval limits BLAS to one thread too)
            with threadpool_limits(limits=1, user_api="blas"):
                exact = reference(index, queries, guard=read)
            start = index.candidates
            count, got = learn(queries, exact, answer, start, MAX_FETCH,
                               self.config.ann_min_recall)
            if count > index.candidates:
                index.learned = index.candidates = count
                index.changed = True
                log.info("product codes: %d candidates for the questions asked (recall %.3f; "
                         "%d held %.3f)", count, got, start,
                         recall_at(queries, exact, answer, start))
            log.info("product codes checked against %d questions in %.1f s (%d candidates)",
                     len(queries), time.perf_counter() - began, index.candidates)
        except _Stopped:
            return
        except Exception:  # the candidates stay as they were
            log.exception("checking the codes against the questions asked failed")

    def _wait_quiet(self, deadline: float) -> None:
        """Until no question or write came for ``ann_check_quiet_ms``, the store closes, or
        ``deadline`` (``time.monotonic()``) passes. On two cores a check beside the queries
        (1.7 s of int8 products at 1M) took 2-4 ms from each one's p50 even niced and in
        another process: the core it takes is the one a query's second field is searched on."""
        quiet = self.config.ann_check_quiet_ms / 1000
        while not self._stop.is_set():
            now = time.monotonic()
            idle = now - self._busy_at
            if idle >= quiet or now >= deadline:
                return
            self._stop.wait(min(quiet - idle, deadline - now))

    # resident copies ------------------------------------------------------------------------
    def start_fill(self, ns: str, index: VectorIndex, lock: Any) -> None:
        """Fill the int8 copies of a mapped namespace whose codes serve (ADR 0026): in a
        background thread, the float32 rows answering meanwhile."""
        if not self._fills(index):
            return
        if not self.config.ann_build_in_background:
            self._fill(index, lock)
            return
        thread = threading.Thread(target=self._fill, args=(index, lock),
                                  name=f"graphmem-compact-{len(self._threads)}", daemon=True)
        self._threads[ns] = thread
        thread.start()

    def _fills(self, index: VectorIndex) -> bool:
        return self.config.compact_rows and index.mapped and index.compact is None

    def _fill(self, index: VectorIndex, lock: Any) -> None:
        if not self._fills(index):
            return
        try:
            steps = steps_of(index)
            with lock:
                if index.ann is None:
                    return
                index.begin_compact(steps)
                compact, n = index.compact, len(index)
            assert compact is not None
            for start in range(0, n, _FILL_CHUNK):
                if self._stop.is_set():
                    return  # kept in step by writes, never ready: the float32 rows answer
                encoded = encode_chunk(index, compact, start, min(start + _FILL_CHUNK, n))
                with lock:
                    if index.compact is not compact:
                        return  # dropped meanwhile (the codes were)
                    compact.store(start, encoded)
            with lock:
                if index.compact is compact:
                    compact.ready = True
            log.info("resident int8 copies of %d rows ready (%d MB)", n, compact.nbytes >> 20)
        except Exception:  # the float32 rows keep answering
            log.exception("filling the resident copies failed: the float32 rows answer")
            with lock:
                index.compact = None

    def _read_verdict(self, ns: str) -> None:
        try:
            side = json.loads(self._paths(ns)[2].read_text())
        except (OSError, ValueError):
            return
        if side.get("namespace") == ns and side.get("format") == FORMAT \
                and "exact_until" in side:
            self.exact_until[ns] = int(side["exact_until"])

    def _write_verdict(self, ns: str) -> None:
        """Remember a failed self-check across restarts (no codes are saved for it)."""
        content_path, context_path, side_path = self._paths(ns)
        try:
            self.folder.mkdir(mode=0o700, exist_ok=True)
            content_path.unlink(missing_ok=True)
            context_path.unlink(missing_ok=True)
            side_path.write_text(json.dumps({"namespace": ns, "format": FORMAT,
                                             "exact_until": self.exact_until[ns]}))
            os.chmod(side_path, 0o600)
        except OSError as exc:
            log.warning("could not record the product codes' verdict: %s", exc)

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
        """Save the codes that serve and changed since loaded (after ``stop``)."""
        for ns, index in vectors.items():
            if index.ann is None:
                continue
            content_path, context_path, side_path = self._paths(ns)
            if not index.changed and side_path.exists():
                continue
            try:
                self.folder.mkdir(mode=0o700, exist_ok=True)
                side_path.unlink(missing_ok=True)  # no sidecar while the codes are replaced
                index.ann["content"].save(content_path)
                index.ann["context"].save(context_path)
                tmp = side_path.with_suffix(".tmp")
                tmp.write_text(json.dumps({
                    "namespace": ns, "format": FORMAT, "epoch": read_epoch(conn, ns),
                    "dim": self.dim,
                    "vectors": len(index), "contexts": index.context_count(),
                    "codes": [len(index.ann[f]) for f in FIELDS],
                    "candidates": index.candidates, "learned": index.learned,
                    "trained_on": self.trained_on.get(ns, len(index))}))
                os.chmod(tmp, 0o600)
                os.replace(tmp, side_path)  # last: the codes before it are whole
                index.changed = False
            except OSError as exc:  # the codes are a cache: the next open rebuilds them
                log.warning("could not save product codes: %s", exc)
        self.state.clear()


class _Stopped(Exception):
    """The store is closing: a check of the questions asked ends where it is."""


def lowest_priority() -> None:
    """Nice the calling thread to 19 (Linux schedules threads apart; best effort)."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)


def ladder(candidates: int) -> list[int]:
    """The candidate counts the self-check tries: ``candidates``, doubled up to MAX_FETCH.

    Example:
        >>> ladder(250)
        [250, 500, 1000, 2000, 4000, 8000, 16000]
    """
    out = [candidates]
    while out[-1] * 2 <= MAX_FETCH:
        out.append(out[-1] * 2)
    return out


def self_check(field: CodeField, pks: np.ndarray, content: np.ndarray, candidates: int,
               min_recall: float, k: int = 10) -> int | None:
    """The fewest candidates per query (``ladder(candidates)``) with which the store's answer
    (the codes' candidates re-scored with the float32 rows) finds ``min_recall`` of the exact
    top-k for ``_CHECK`` of the namespace's own vectors as probes, the probe itself left out
    of both lists, by the probes' mean less its standard error; None if none does."""
    n = content.shape[0]
    # a quarter of the rows or more costs what the exact scan does: not worth codes
    tries = [c for c in ladder(candidates) if 4 * c <= n] or ladder(candidates)[:1]
    if n <= k + 1:
        return tries[0]
    rng = np.random.default_rng(n)
    probes = rng.choice(n, size=min(_CHECK, n), replace=False)
    exact: list[set[int]] = []
    for start in range(0, len(probes), 16):  # n x 16 scores at a time (64 MB at 1M)
        part = probes[start:start + 16]
        scores = content @ content[part].T
        for j, i in enumerate(part.tolist()):
            scores[i, j] = -np.inf
            exact.append(set(np.argpartition(-scores[:, j], k)[:k].tolist()))
    row_of = {int(pk): row for row, pk in enumerate(pks.tolist())}
    for count in tries:
        found = field.search_many(content[probes], count)
        hits = []
        for i, keys, want in zip(probes.tolist(), found, exact, strict=True):
            rows = np.unique([row_of[key] for key in keys.tolist() if key in row_of])
            rows = rows[rows != i]
            best = rows[np.argsort(-(content[rows] @ content[i]))[:k]]
            hits.append(len(set(best.tolist()) & want) / k)
        # the probes' recall less its standard error: a count that only samples over the
        # bar does not pass (ADR 0052)
        if float(np.mean(hits) - _MARGIN_SE * np.std(hits) / np.sqrt(len(hits))) >= min_recall:
            return count
    return None
