"""Serving a retrieval (SPEC §5): the call validated (``Query``), the hot cache, the
retrieval pool, the query's embedding (batched with concurrent ones), BLAS threads and the
access bookkeeping. The ranking itself is ``graphmem.engine.ranking``: seeds, walk, rerank.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, TypeVar

from graphmem.engine.access import AccessLog
from graphmem.engine.core import Core
from graphmem.engine.hot_cache import HotCache
from graphmem.engine.query_batcher import QueryBatcher
from graphmem.engine.ranking import STRATEGIES, Query, Ranking
from graphmem.engine.threads import single_threaded_blas, usable_cpus
from graphmem.errors import ValidationError
from graphmem.models import RetrievalResult, Tier
from graphmem.rules import validation as v
from graphmem.rules.time_expr import query_span

log = logging.getLogger(__name__)
T = TypeVar("T")
#: at most this many distinct keyword fields keep their split terms (then the memo starts over)
_TERMS_MEMO = 100_000
#: the names of the retrieval pool's threads (ADR 0057)
_POOL_PREFIX = "graphmem-retrieval"

#: a time as a caller may give it: a datetime or an ISO 8601 string
When = datetime | str | None
#: what ``filters`` may hold: equality on fields, ``type`` (one or a list), event time
#: ``since`` (at or after) / ``until`` (before)
FILTERS = frozenset({"source", "session_id", "topic", "kind", "metadata", "type", "since",
                     "until"})


class Retriever:
    """Serves ``Ranking``: validates the call, answers from the hot cache or computes on the
    retrieval pool, and records the results' accesses.

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> mem = GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder())
        >>> m = mem.store("the deploy failed", namespace="ops")
        >>> r = Retriever(mem.core)
        >>> [x.memory.id for x in r.retrieve(r.query("deploy", "ops"), touch=False)] == [m.id]
        True
        >>> mem.close()
    """

    def __init__(self, core: Core, access: AccessLog | None = None) -> None:
        self.core = core
        self.access = access or AccessLog(core)
        #: concurrent retrievals embed their queries in one model call (the query model)
        self.batcher = QueryBatcher(core.embedder, queries=True)
        self.config = core.config
        self.clock = core.clock
        #: per namespace: retrievals served by this process, and those that found something
        self.queries: Counter[str] = Counter()
        self.hits: Counter[str] = Counter()
        #: analysed keyword field -> its terms: the same candidates come back query after query
        self._terms: dict[str, tuple[str, ...]] = {}
        self.ranking = Ranking(core.store, core.analyzer, core.config, core.clock, self._split,
                               self.beside)
        self.cache = HotCache(core.config.cache, core.clock)
        #: at most this many retrievals compute at once (ADR 0051), each on one of this many
        #: threads of the retrieval pool, in the order they came (ADR 0057); 0: no bound,
        #: each in its caller's thread
        self._bound = _bound(core.config.retrieval.concurrency, core.store.cpu_bound)
        self._pool: ThreadPoolExecutor | None = None  # lazily, under _lock
        self._lock = threading.Lock()
        self._closed = False  # no pool is made after close

    def _split(self, field: str) -> tuple[str, ...]:
        terms = self._terms.get(field)
        if terms is None:
            if len(self._terms) >= _TERMS_MEMO:
                self._terms.clear()
            terms = self._terms[field] = tuple(field.split())
        return terms

    def query(self, text: str, namespace: str, *, limit: int = 10,
              tiers: Collection[Tier | str] | None = None, min_similarity: float | None = None,
              strategy: str | None = None, depth: int | None = None,
              filters: Mapping[str, Any] | None = None,
              include_archived: bool | None = None, as_of: When = None,
              since: When = None, until: When = None, now: When = None) -> Query:
        """The call validated, with the configured defaults; times are datetimes or ISO 8601
        strings (naive: UTC)."""
        rc = self.config.retrieval
        if not isinstance(text, str) or not text.strip():
            raise ValidationError("query is empty")
        if len(text) > self.config.write.max_content_chars:
            raise ValidationError("query is longer than the content limit")
        v.clean_text(text, "query")
        strategy = strategy or rc.strategy
        if strategy not in STRATEGIES:
            raise ValidationError(f"unknown strategy {strategy!r}: one of {', '.join(STRATEGIES)}")
        ms = rc.min_similarity if min_similarity is None else min_similarity
        if isinstance(ms, bool) or not isinstance(ms, int | float) or not -1 <= ms <= 1:
            raise ValidationError("min_similarity must be a number in -1..1")
        tier_list = None if tiers is None else tuple(t for t in (v.tier(x) for x in tiers) if t)
        if tier_list is not None and not tier_list:
            raise ValidationError("tiers is empty")
        given = {k: x for k, x in (("since", since), ("until", until)) if x is not None}
        filters = {k: x for k, x in {**dict(filters or {}), **given}.items() if x is not None}
        unknown = set(filters) - FILTERS
        if unknown:
            raise ValidationError(f"unknown filter(s): {', '.join(sorted(unknown))}")
        for name in ("source", "session_id", "topic", "kind"):
            if name in filters:
                v.optional_text(filters[name], f"filter {name!r}")
        if "metadata" in filters:
            filters["metadata"] = v.metadata(filters["metadata"], self.config.write)
        if "type" in filters:
            filters["type"] = v.types(filters["type"])
        for name in ("since", "until"):
            if name in filters:
                filters[name] = v.timestamp(filters[name])
        return Query(
            text=text, namespace=v.namespace(namespace),
            limit=v.bounded(limit, "limit", 1, rc.max_limit), tiers=tier_list,
            min_similarity=float(ms), strategy=strategy,
            depth=v.bounded(rc.depth if depth is None else depth, "depth", 0, rc.max_depth),
            filters=filters,
            archived=("equal" if include_archived or (
                include_archived is None and strategy == "comprehensive") else
                "hidden" if include_archived is not None or not rc.reach_archived else "below"),
            as_of=v.timestamp(as_of),
            window=query_span(text, v.timestamp(now) or self.clock()) if rc.weights.time
            else None,
        )

    def retrieve(self, q: Query, *, touch: bool = True) -> list[RetrievalResult]:
        """Run the pipeline; ``touch`` records the access of every result (agents' searches;
        operators' reads pass False and change nothing)."""
        generation = self.core.generation[q.namespace]
        results = self.cache.get(q.namespace, q.key(), generation)
        if results is not None and _any_expired(results, self.clock()):
            results = None  # a TTL ran out since it was cached: no write told the cache
        if results is None:
            pool = self._computing_pool()
            try:
                turn = None if pool is None else pool.submit(self._compute, q, generation)
            except RuntimeError:  # the pool was shut down meanwhile (closing): as without one,
                turn = None  # and the closed store says why
            results = self._compute(q, generation) if turn is None else turn.result()
        with single_threaded_blas():
            if touch and results:
                self._bookkeeping(q.namespace, results)
        self.queries[q.namespace] += 1
        self.hits[q.namespace] += bool(results)
        return results

    def _computing_pool(self) -> ThreadPoolExecutor | None:
        """The pool a retrieval computes on (ADR 0057): a queue the bound's threads take
        retrievals from in order, so a thread that finished one takes the next without
        sleeping. None: no bound, or the caller is one of the pool's threads already."""
        if not self._bound or threading.current_thread().name.startswith(_POOL_PREFIX):
            return None
        with self._lock:
            if self._closed:
                return None
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._bound, thread_name_prefix=_POOL_PREFIX)
            return self._pool

    def _compute(self, q: Query, generation: int) -> list[RetrievalResult]:
        """A retrieval the hot cache did not hold: embed, rank, cut; cached."""
        self.core.vectors.check(q.namespace)  # the query must meet vectors of its model
        vec = self.cache.embedding(q.text, self.batcher.embed_one)
        with single_threaded_blas():
            results = self.ranking.answer(q, vec)
        for r in results:
            r.memory.embedding = None
            r.memory.context_embedding = None
        self.cache.put(q.key(), generation, results)
        return results

    def beside(self, work: Callable[[], T]) -> Callable[[], T]:
        """``work`` handed to a free thread of the retrieval pool; the returned call waits for
        it, or runs it itself if no thread took it meanwhile (all busy computing retrievals,
        or no pool): a retrieval never waits for a turn of its own (ADR 0070)."""
        pool = self._pool
        try:
            task = None if pool is None else pool.submit(work)
        except RuntimeError:  # shut down meanwhile (closing)
            task = None

        def wait() -> T:
            return work() if task is None or task.cancel() else task.result()
        return wait

    def close(self) -> None:
        """Stop the pool's threads (their retrievals are finished first)."""
        with self._lock:
            pool, self._pool, self._closed = self._pool, None, True
        if pool is not None:
            pool.shutdown(wait=True)

    def _bookkeeping(self, ns: str, results: list[RetrievalResult]) -> None:
        """Access counts, windows and the predicted relevance (``AccessLog``); the results
        show the memories as written - or, with ``retrieval.defer_access``, as they were
        read: the accesses are queued for the access log's writer."""
        accesses = [(r.memory.id, r.terms["semantic"]) for r in results]
        if self.config.retrieval.defer_access:
            self.access.defer(ns, accesses)
            return
        written = self.access.record(ns, accesses)
        for r in results:
            r.memory = written.get(r.memory.id, r.memory)


def _any_expired(results: list[RetrievalResult], now: datetime) -> bool:
    """Whether a result's own TTL has run out by ``now`` (a cached answer is stale then)."""
    return any(r.memory.expires_at is not None and r.memory.expires_at <= now
               for r in results)


def _bound(concurrency: int | None, cpu_bound: bool) -> int:
    """The bound on retrievals computing at once (ADR 0051): ``concurrency`` if set (0: none),
    else the usable CPUs for a CPU-bound store and none for a server's.

    Example:
        >>> _bound(0, True), _bound(None, False), _bound(3, False)
        (0, 0, 3)
    """
    if concurrency is None:
        return usable_cpus() if cpu_bound else 0
    return max(0, concurrency)
