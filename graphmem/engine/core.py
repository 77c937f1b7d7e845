"""``Core``: the one frozen bundle every path of graphmem takes (writes, edits, access,
retrieval, maintenance, consolidation, records): the store port, the embedder, the text
analyser, the configuration and the clock. Nothing in it does I/O on construction."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from graphmem.config import GraphMemConfig
from graphmem.engine.batch_events import batch_events, run_events
from graphmem.engine.embedding import Embedder
from graphmem.engine.events import EventLog
from graphmem.engine.vector_guard import VectorGuard
from graphmem.errors import NotFoundError
from graphmem.models import Memory
from graphmem.rules import validation as v
from graphmem.rules.text import Analyzer
from graphmem.store.base import MemoryStore, WriteBatch

Clock = Callable[[], datetime]


@dataclass(frozen=True)
class Core:
    """What a graphmem operation works with.

    Example:
        >>> from graphmem.store.sqlite.store import SQLiteStore
        >>> from graphmem.engine.embedding import SentenceTransformerEmbedder
        >>> from graphmem.models import utcnow
        >>> cfg = GraphMemConfig()
        >>> core = Core(SQLiteStore("/tmp/gm"), SentenceTransformerEmbedder(cfg.embedding),
        ...             Analyzer(cfg.write.language), cfg, utcnow)
        >>> core.config.retrieval.max_limit
        100
    """

    store: MemoryStore
    embedder: Embedder
    analyzer: Analyzer
    config: GraphMemConfig
    clock: Clock
    #: namespace -> writes this process applied through ``apply`` (the hot cache's key:
    #: a cached answer is served only while its namespace's count is unchanged)
    generation: Counter[str] = field(default_factory=Counter, compare=False)
    #: what waits to be written behind the caller's back (deferred access bookkeeping):
    #: maintenance and consolidation ``settle`` it before they read
    pending: list[Callable[[], None]] = field(default_factory=list, compare=False)
    #: one embedding model per namespace: checked before its first embedding in a process
    vectors: VectorGuard = field(init=False, compare=False, repr=False)
    #: what happened to memories in this process, for live listeners (``engine.events``)
    events: EventLog = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "vectors", VectorGuard(
            self.store, self.embedder, enabled=self.config.embedding.verify_store))
        object.__setattr__(self, "events", EventLog(clock=self.clock))

    def settle(self) -> None:
        for wait in self.pending:
            wait()

    def apply(self, batch: WriteBatch) -> None:
        """Apply a write batch (``store.apply``) and invalidate the namespace's cached
        answers. Access bookkeeping alone writes through the store directly: it changes no
        answer's membership."""
        try:
            self.store.apply(batch)
        finally:
            self.generation[batch.namespace] += 1
        self.events.publish(batch_events(batch, self.clock()))  # only what was applied

    def save_run(self, data: dict[str, Any]) -> None:
        """Save a consolidation run's record (``store.save_run``); a new status is an event
        for the namespaces it concerns."""
        self.store.save_run(data)
        seen = self.events.run_states
        if seen.get(data["id"]) != data.get("status"):  # progress saves are no event
            seen[data["id"]] = data.get("status")
            self.events.publish(run_events(data, self.clock()))

    def require(self, ns: str, ids: Sequence[str], *,
                embeddings: bool = False) -> dict[str, Memory]:
        """The memories of ``ids`` in namespace ``ns``; ``NotFoundError`` for the first one
        missing (a memory of another namespace is reported exactly like a missing one)."""
        for i in ids:
            v.memory_id(i)
        found = self.store.get_memories(ns, list(ids), embeddings=embeddings)
        for i in ids:
            if i not in found:
                raise NotFoundError(f"memory {i!r} not found in namespace {ns!r}")
        return found
