"""Access bookkeeping: what a retrieval or a full read does to the memories it returns.

Counts, the last access, the access window, the predicted relevance and the promotion an
access may earn are computed from a fresh read *under the facade's write lock* and written
in one batch, so concurrent retrievals of the same memory never lose an increment (they used
to compute absolute counts from the records they had ranked, outside the lock). Across
processes sharing a graph database the last batch wins (ADR 0008).

With ``retrieval.defer_access`` (the REST server's default) a retrieval queues its accesses
instead and returns; a writer thread gathers for ``GATHER_SECONDS`` and records everything
queued in one read and one batch (one patch per memory, each access at its retrieval's
time), so concurrent searches share the write. ``settle`` waits for the queue (and cuts the
gathering short); maintenance, consolidation and ``close`` settle first. A crash loses at
most the accesses still queued (counts, never memories)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import Any

from graphmem.engine.core import Core
from graphmem.errors import ValidationError
from graphmem.models import Memory
from graphmem.rules.dynamics import record_access
from graphmem.store.base import WriteBatch

log = logging.getLogger(__name__)

#: the deferred writer's gathering window: searches queued within it share one batch
GATHER_SECONDS = 0.05
#: (memory id, predicted relevance or None)
Access = tuple[str, float | None]


class AccessLog:
    """Counts accesses of memories: retrievals (``record``), full reads (``reinforce``).

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> mem = GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder())
        >>> m = mem.store("a note", namespace="ops")
        >>> log = AccessLog(mem.core)
        >>> log.record("ops", [(m.id, 0.8)])[m.id].access_count
        1
        >>> mem.close()
    """

    def __init__(self, core: Core, lock: AbstractContextManager[Any] | None = None) -> None:
        self.core = core
        self.lock: AbstractContextManager[Any] = lock if lock is not None else nullcontext()
        self._cond = threading.Condition()
        #: (namespace, accesses, when) of retrievals not yet recorded (``defer``)
        self._queue: list[tuple[str, list[Access], datetime]] = []
        self._busy = False
        #: a caller waits for the queue (``settle``): no gathering
        self._hurry = False
        self._writer: threading.Thread | None = None
        self._closing = False
        core.pending.append(self.settle)

    def read(self, ns: str, ids: Sequence[str], *, touch: bool, agent: str | None
             ) -> list[Memory]:
        """Full records of ``ids`` in that order (each once); ``touch``: a use of each."""
        limit = self.core.config.retrieval.max_limit
        if len(ids) > limit:
            raise ValidationError(f"at most {limit} ids at once")
        found = self.core.require(ns, ids)
        if touch:
            found.update(self.record(ns, [(i, None) for i in found], reinforce=True,
                                     agent=agent))
        return [found[i] for i in dict.fromkeys(ids)]

    def record(self, ns: str, accesses: Sequence[Access], *, reinforce: bool = False,
               agent: str | None = None) -> dict[str, Memory]:
        """One access of each id (a retrieval shows them; ``reinforce``: a full read used
        them, their decay age restarts; ``agent``: who used them, for the shared-use
        promotion). Returns the memories as written (a memory deleted meanwhile is skipped)."""
        return self._record(ns, [(list(accesses), self.core.clock())], reinforce=reinforce,
                            agent=agent)

    def _record(self, ns: str, groups: list[tuple[list[Access], datetime]], *,
                reinforce: bool = False, agent: str | None = None) -> dict[str, Memory]:
        """Every access of ``groups`` (accesses, when) in order, in one read and one batch:
        a memory accessed twice is counted twice, in one patch."""
        if not any(accesses for accesses, _ in groups):
            return {}
        cfg = self.core.config
        with self.lock:
            ids = list(dict.fromkeys(i for accesses, _ in groups for i, _ in accesses))
            fresh = self.core.store.get_memories(ns, ids)
            batch = WriteBatch(ns)
            patches: dict[str, dict[str, object]] = {}
            for accesses, now in groups:
                for id, predicted in accesses:
                    m = fresh.get(id)
                    if m is None:
                        continue
                    fields, transition = record_access(m, now, cfg.dynamics, cfg.tiers,
                                                       predicted, reinforce=reinforce,
                                                       agent=agent)
                    patches.setdefault(m.id, {}).update(fields)
                    if transition is not None:
                        batch.transitions.append(transition)
            batch.patches = list(patches.items())
            self.core.store.apply(batch)
        return fresh

    # deferred (retrieval.defer_access) --------------------------------------------------------
    def defer(self, ns: str, accesses: Sequence[Access]) -> None:
        """Queue a retrieval's accesses, at this moment's time, for the writer thread."""
        if not accesses:
            return
        with self._cond:
            self._queue.append((ns, list(accesses), self.core.clock()))
            if self._writer is None:
                self._closing = False
                self._writer = threading.Thread(target=self._write_queued, daemon=True,
                                                name="graphmem-access")
                self._writer.start()
            elif len(self._queue) == 1:  # the writer waits for work, not while it gathers
                self._cond.notify_all()

    def _write_queued(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                # gather what comes meanwhile: a batch's read and transaction are shared by
                # its retrievals (each access keeps its own time)
                self._cond.wait_for(lambda: self._closing or self._hurry, GATHER_SECONDS)
                if not self._queue:
                    self._writer = None
                    return
                queued, self._queue = self._queue, []
                self._busy, self._hurry = True, False
            try:
                by_ns: dict[str, list[tuple[list[Access], datetime]]] = {}
                for ns, accesses, at in queued:
                    by_ns.setdefault(ns, []).append((accesses, at))
                for ns, groups in by_ns.items():
                    self._record(ns, groups)
            except Exception:  # counts, not memories: logged, the writer goes on
                log.exception("recording deferred accesses failed")
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def settle(self) -> None:
        """Until every deferred access is recorded."""
        with self._cond:
            while self._queue or self._busy:
                self._hurry = True
                self._cond.notify_all()
                self._cond.wait()

    def close(self) -> None:
        """Record what is queued and stop the writer."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
            writer = self._writer
        if writer is not None:
            writer.join()
