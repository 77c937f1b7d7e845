"""Access bookkeeping: what a retrieval or a full read does to the memories it returns.

Counts, the last access, the access window, the predicted relevance and the promotion an
access may earn are computed from a fresh read *under the facade's write lock* and written
in one batch, so concurrent retrievals of the same memory never lose an increment (they used
to compute absolute counts from the records they had ranked, outside the lock). Across
processes sharing a graph database the last batch wins (ADR 0008)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from graphmem.engine.core import Core
from graphmem.errors import ValidationError
from graphmem.models import Memory
from graphmem.rules.dynamics import record_access
from graphmem.store.base import WriteBatch

#: (memory id, predicted relevance or None)
Access = tuple[str, float | None]


class AccessLog:
    """Counts accesses of memories: retrievals (``record``), full reads (``reinforce``).

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.bench.scale import RandomEmbedder
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
        if not accesses:
            return {}
        cfg = self.core.config
        with self.lock:
            now = self.core.clock()
            fresh = self.core.store.get_memories(ns, list(dict.fromkeys(i for i, _ in accesses)))
            batch = WriteBatch(ns)
            for id, predicted in accesses:
                m = fresh.get(id)
                if m is None:
                    continue
                fields, transition = record_access(m, now, cfg.dynamics, cfg.tiers, predicted,
                                                   reinforce=reinforce, agent=agent)
                batch.patches.append((m.id, fields))
                if transition is not None:
                    batch.transitions.append(transition)
            self.core.store.apply(batch)
        return fresh
