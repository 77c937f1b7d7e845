"""The retrieval pipeline (SPEC §5): seeds, bounded walk, explainable rerank.

1. embed the query; analyse its keywords;
2. seeds: vector top-k (content and context embeddings) and keyword top-k (BM25 over the
   keyword and context fields), fused by RRF; seeds below ``min_similarity`` without a keyword
   match are dropped;
3. a bounded walk (depth 0..2) over typed, weighted edges from the best seeds;
4. every candidate gets its terms; semantic and keyword signals are fused (z-scores over the
   candidates, or RRF), a share of each FOLLOWS neighbour's fused relevance is added, and the
   best relevance that reaches it over typed edges (``walk``: CAUSES, REFERENCES, ...); then the
   weighted priors (graph proximity by personalised PageRank, decayed importance, recency,
   popularity, tier, named source);
5. the strategy orders the results; the top ``limit`` are returned with score, terms, path and
   a ``disputed`` flag, and their access bookkeeping is written in one batch.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import numpy as np

from graphmem.engine.access import AccessLog
from graphmem.engine.core import Core
from graphmem.engine.hot_cache import HotCache
from graphmem.engine.query_batcher import QueryBatcher
from graphmem.engine.threads import single_threaded_blas, usable_cpus
from graphmem.engine.walk import bounded_walk, personalised_pagerank, propagate
from graphmem.errors import ValidationError
from graphmem.models import (
    TIER_ORDER,
    Candidate,
    Kind,
    PathStep,
    RelationType,
    RetrievalResult,
    Status,
    Tier,
    WalkPath,
)
from graphmem.rules import fusion, scoring
from graphmem.rules import validation as v
from graphmem.rules.bm25 import bm25
from graphmem.rules.tiers import age_hours, decayed_importance
from graphmem.rules.time_expr import TimeSpan, query_span
from graphmem.rules.time_prior import keyword_query, proximity
from graphmem.store.base import ListSpec

log = logging.getLogger(__name__)
#: at most this many distinct keyword fields keep their split terms (then the memo starts over)
_TERMS_MEMO = 100_000
#: the names of the retrieval pool's threads (ADR 0057)
_POOL_PREFIX = "graphmem-retrieval"

Clock = Callable[[], datetime]
STRATEGIES = ("weighted", "fast_first", "comprehensive")
#: what ``filters`` may hold: equality on fields, ``type`` (one or a list), event time
#: ``since`` (at or after) / ``until`` (before)
FILTERS = frozenset({"source", "session_id", "topic", "kind", "metadata", "type", "since",
                     "until"})


class _Ranked(NamedTuple):
    """A candidate scored: its terms and the path the walk reached it by."""

    candidate: Candidate
    score: float
    terms: dict[str, float]
    path: WalkPath
    #: a term's reason in words, by term (``RetrievalResult.reasons``)
    reasons: dict[str, str] | None = None


class _Keywords(NamedTuple):
    """A query's analysed terms, their collection statistics and its keyword seeds."""

    terms: list[str]
    stats: Any
    seeds: list[tuple[str, float]]


@dataclass(slots=True, frozen=True)
class Query:
    """One retrieval request, validated and with the configured defaults filled in
    (Retriever.query builds it).

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> mem = GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder())
        >>> q = Retriever(mem.core).query("deploy", "ops", limit=5)
        >>> q.limit, q.strategy, q.depth
        (5, 'weighted', 1)
        >>> mem.close()
    """

    text: str
    namespace: str
    limit: int
    tiers: tuple[Tier, ...] | None
    min_similarity: float
    strategy: str
    depth: int
    filters: Mapping[str, Any]
    #: archived memories reached through the summaries that stand for them (ADR 0059):
    #: "below" (the default view: they rank with the ``archived`` prior), "equal" (as if
    #: active: ``include_archived=True``, ``comprehensive``) or "hidden" (active only)
    archived: str = "hidden"
    #: only what was known and valid at this time (validity, ADR 0013); None: now, where
    #: memories no longer valid still rank, below by ``weights.invalid`` and never above
    #: the memory that superseded them (ADR 0059)
    as_of: datetime | None = None
    #: the time the query names (issue 49), relative words read against ``now=`` or the
    #: clock: a soft prior (term ``time``), never a filter
    window: TimeSpan | None = None

    def key(self) -> tuple[Any, ...]:
        """Everything that decides the answer (the hot cache's key)."""
        filters = tuple(sorted((k, repr(v)) for k, v in self.filters.items()))
        return (self.namespace, self.text, self.limit, self.tiers, self.min_similarity,
                self.strategy, self.depth, filters, self.archived, self.as_of, self.window)


class Retriever:
    """The retrieval pipeline: vector, context and keyword seeds, a bounded walk over typed
    edges, and the rerank (``scoring``); results explain their score terms and path.

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
        self.store = core.store
        self.embedder = core.embedder
        #: concurrent retrievals embed their queries in one model call (the query model)
        self.batcher = QueryBatcher(core.embedder, queries=True)
        self.analyzer = core.analyzer
        self.config = core.config
        self.clock = core.clock
        #: per namespace: retrievals served by this process, and those that found something
        self.queries: Counter[str] = Counter()
        self.hits: Counter[str] = Counter()
        #: analysed keyword field -> its terms: the same candidates come back query after
        #: query, and splitting a thousand fields was an eighth of a retrieval at 10k
        self._terms: dict[str, tuple[str, ...]] = {}
        self.cache = HotCache(core.config.cache, core.clock)
        #: reads the keyword seeds while the caller embeds the query (ADR 0037); lazily
        self._helper: ThreadPoolExecutor | None = None
        self._helper_lock = threading.Lock()
        #: at most this many retrievals compute at once (ADR 0051), each on one of this many
        #: threads of the retrieval pool, in the order they came (ADR 0057); 0: no bound,
        #: each in its caller's thread
        self._bound = _bound(core.config.retrieval.concurrency, self.store.cpu_bound)
        self._pool: ThreadPoolExecutor | None = None  # lazily, under _helper_lock
        self._closed = False  # no pool is made after close
        #: retrievals computing now: among others, one reads its keyword seeds itself
        self._active = 0

    def _split(self, field: str) -> tuple[str, ...]:
        terms = self._terms.get(field)
        if terms is None:
            if len(self._terms) >= _TERMS_MEMO:
                self._terms.clear()
            terms = self._terms[field] = tuple(field.split())
        return terms

    def query(self, text: Any, namespace: str, *, limit: int = 10,
              tiers: Collection[Tier | str] | None = None, min_similarity: float | None = None,
              strategy: str | None = None, depth: int | None = None,
              filters: Mapping[str, Any] | None = None,
              include_archived: bool | None = None, as_of: Any = None,
              since: Any = None, until: Any = None, now: Any = None) -> Query:
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
                turn = None if pool is None else pool.submit(self._counted, q, generation)
            except RuntimeError:  # the pool was shut down meanwhile (closing): as without one,
                turn = None  # and the closed store says why
            results = self._counted(q, generation) if turn is None else turn.result()
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
        with self._helper_lock:
            if self._closed:
                return None
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._bound, thread_name_prefix=_POOL_PREFIX)
            return self._pool

    def _counted(self, q: Query, generation: int) -> list[RetrievalResult]:
        with self._helper_lock:
            self._active += 1
        try:
            return self._compute(q, generation)
        finally:
            with self._helper_lock:
                self._active -= 1

    def _compute(self, q: Query, generation: int) -> list[RetrievalResult]:
        """A retrieval the hot cache did not hold: embed, seed, walk, rank, cut; cached."""
        self.core.vectors.check(q.namespace)  # the query must meet vectors of its model
        vec, keyword = self._embed_beside_keywords(q)
        with single_threaded_blas():
            if q.strategy == "fast_first":
                results = self._fall_through(q, vec)
            else:
                results = self._results(q.namespace, self._rank(q, vec, keyword)[: q.limit])
            self._flag_disputes(q.namespace, results)
        for r in results:
            r.memory.embedding = None
            r.memory.context_embedding = None
        self.cache.put(q.namespace, q.key(), generation, results)
        return results

    def _embed_beside_keywords(self, q: Query) -> tuple[np.ndarray, _Keywords | None]:
        """The query's vector, and its keyword seeds found meanwhile (ADR 0037): the model
        and SQLite both leave the GIL, so a helper thread reads the full-text index while
        this one embeds. A helper still busy with other retrievals is not waited for: its
        task is withdrawn and ``_rank`` finds the seeds itself. ``fast_first`` asks per tier.
        Among other retrievals computing, the cores are busy already: the hand-off to the
        helper would only cost (8 threads at 100k: 108-112 -> 116/s; ADR 0051)."""
        vec = self.cache.cached_embedding(q.text)
        if (vec is not None or q.strategy == "fast_first" or not self.config.retrieval.overlap
                or self._active > 1):
            return (vec if vec is not None else
                    self.cache.embedding(q.text, self.batcher.embed_one)), None
        with self._helper_lock:
            if self._helper is None:
                self._helper = ThreadPoolExecutor(2, thread_name_prefix="graphmem-keywords")
            task = self._helper.submit(self._keyword_seeds, q)
        try:
            vec = self.cache.embedding(q.text, self.batcher.embed_one)
        except BaseException:
            task.cancel()
            raise
        return vec, (None if task.cancel() else task.result())

    def close(self) -> None:
        """Stop the pool's and the helper's threads (their tasks are finished first)."""
        with self._helper_lock:
            pools = (self._pool, self._helper)
            self._pool = self._helper = None
            self._closed = True
        for pool in pools:
            if pool is not None:
                pool.shutdown(wait=True)

    def _keyword_seeds(self, q: Query) -> _Keywords:
        """The query's terms, their statistics, the terms that seed and the keyword seeds
        ranked by the namespace's BM25 (none of it needs the query's vector)."""
        rc = self.config.retrieval
        ns = q.namespace
        terms = self.analyzer.query_terms(keyword_query(q.text, q.window))
        statuses = (Status.ACTIVE,) if q.archived == "hidden" else tuple(Status)
        stats = self.store.keyword_stats(ns, terms) if terms else None
        seed_terms = self._seed_terms(terms, stats)
        newest = self._over_budget(seed_terms, stats)
        asked = (self.config.tuning.newest_pool if newest else
                 self.config.tuning.keyword_pool or self.store.keyword_pool)
        found = self.store.keyword_candidates(ns, seed_terms, max(rc.keyword_k, asked),
                                              tiers=q.tiers, statuses=statuses, newest=newest)
        keyword = self._rescore_keyword(seed_terms, stats, found)[: rc.keyword_k]
        return _Keywords(terms, stats, keyword)

    def _fall_through(self, q: Query, vec: np.ndarray) -> list[RetrievalResult]:
        """``fast_first`` (the seeds' meaning): search the fastest wanted tier alone, and the
        next slower one only while fewer than ``limit`` results pass ``min_similarity``.
        Results keep tier order (faster first), by score within a tier."""
        out: list[RetrievalResult] = []
        passing = 0
        for tier in TIER_ORDER:
            if q.tiers is not None and tier not in q.tiers:
                continue
            found = self._results(q.namespace, self._rank(replace(q, tiers=(tier,)), vec)
                                  [: q.limit - len(out)])
            out.extend(found)
            passing += sum(r.terms["semantic"] >= q.min_similarity for r in found)
            if passing >= q.limit or len(out) >= q.limit:
                break
        return out

    def _rank(self, q: Query, vec: np.ndarray,
              found: _Keywords | None = None) -> list[_Ranked]:
        """Every candidate of the query, scored and sorted best first (``found``: its keyword
        seeds, when they were read while the query was embedded)."""
        rc = self.config.retrieval
        w = rc.weights
        ns = q.namespace
        statuses = (Status.ACTIVE,) if q.archived == "hidden" else tuple(Status)

        # 2. seeds (more of them when filters will drop some)
        vector_k = rc.vector_k * (self.config.tuning.filtered_widen if q.filters or q.as_of else 1)
        dense, context = self.store.vector_topk_fields(ns, vec, vector_k, tiers=q.tiers,
                                                       statuses=statuses)
        terms, stats, keyword = found if found is not None else self._keyword_seeds(q)
        ordered, seeds = scoring.seeds(dense, context, keyword, q.min_similarity, rc.rrf_k,
                                       rc.seeds)
        if not seeds:
            return []

        # 3. bounded walk
        edges = (self.store.neighbourhood(ns, seeds, q.depth, max_nodes=rc.max_walk_nodes)
                 if q.depth > 0 else [])
        reached = bounded_walk(seeds, edges, q.depth, rc.edge_weights, rc.hop_decay,
                               rc.max_walk_nodes)
        pool = set(ordered) | set(reached) | self._time_seeds(q, statuses)
        memories, cosines = self.store.get_scored(ns, sorted(pool), vec)
        lineage = self._lineage(ns, [m for m in memories.values()
                                     if m.status is not Status.ACTIVE]) \
            if q.archived != "hidden" else {}
        now = self.clock()
        cands = [i for i in pool if i in memories and self._keep(memories[i], q, lineage, now)]
        if not cands:
            return []
        cands.sort()  # deterministic order for ties

        # 4. terms
        sem, ctx_sem = {}, {}
        for i in cands:
            on_content, on_context = cosines.get(i, (0.0, None))
            sem[i] = on_content
            ctx_sem[i] = on_context if on_context is not None else on_content
        kw, ctx_kw = self._keyword_terms(terms, stats, [memories[i] for i in cands])
        signals = [sem, kw, ctx_sem, ctx_kw]
        weights = [w.semantic, w.keyword, w.context_semantic, w.context_keyword]
        relevance = scoring.relevance(signals, weights, cands, rc)
        cand_set = set(cands)
        follows = scoring.follows(relevance, edges, cands, rc.follows_share)
        walked = propagate(relevance, edges, q.depth, rc.edge_weights, rc.hop_decay,
                           skip=rc.walk_skip)
        ppr = personalised_pagerank(cands, edges, {i: s for i, s in seeds.items()
                                                   if i in cand_set},
                                    rc.edge_weights, alpha=rc.pagerank_alpha)
        graph = fusion.normalise_max(ppr)
        source = self._source_boost(q.text, [memories[i] for i in cands])
        max_access = max((memories[i].access_count for i in cands), default=0)
        computed = self.config.importance.computed
        pairs = scoring.weighted(w)
        reasons: dict[str, str] = {}
        results: list[_Ranked] = []
        for i in cands:
            m = memories[i]
            age_h = max(0.0, (now - m.created_at).total_seconds() / 3600)
            terms_i = {
                "semantic": sem[i], "keyword": kw.get(i, 0.0),
                "context_semantic": ctx_sem[i], "context_keyword": ctx_kw.get(i, 0.0),
                "relevance": relevance[i], "follows": follows[i], "walk": walked[i],
                "graph": graph.get(i, 0.0),
                # computed importance (ADR 0014): the blend maintenance persisted
                "importance": (m.importance if computed else decayed_importance(
                    m.base_importance, m.tier, age_hours(m.reinforced_at, now),
                    self.config.tiers)),
                "recency": 0.5 ** (age_h / rc.recency_half_life_hours),
                "popularity": (math.log1p(m.access_count) / math.log1p(max_access)
                               if max_access else 0.0),
                "tier": rc.tier_weights[m.tier] if q.strategy == "weighted" else 0.0,
                "source": 1.0 if m.source is not None and m.source == source else 0.0,
            }
            score = scoring.score(terms_i, w, pairs)
            if q.as_of is None and not m.valid_at(now):  # superseded or not yet valid
                score -= w.invalid
                terms_i["invalid"] = 1.0
            if q.archived != "hidden" and m.kind is Kind.SUMMARY and w.summary:
                score -= w.summary  # its members are reached: they speak first (ADR 0059)
                terms_i["summary"] = 1.0
            if q.window is not None:  # the time the query names (issue 49, ADR 0061)
                near, why = proximity(q.window, m.created_at, m.mentioned)
                terms_i["time"] = near
                score += w.time * near
                if why:
                    reasons[i] = why
            if i in lineage:  # an archived memory, reached through its summary
                if q.archived == "below":  # the default view: below active peers (ADR 0059)
                    score -= w.archived
                    terms_i["archived"] = 1.0
                path = WalkPath(nodes=(lineage[i], i),
                                steps=(PathStep(RelationType.SUMMARIZES, True),))
            else:
                path = reached[i].path if i in reached else WalkPath(nodes=(i,))
            results.append(_Ranked(m, score, terms_i, path,
                                   {"time": reasons[i]} if i in reasons else None))

        if q.as_of is None:
            self._below_successors(ns, results)
        # 5. order (the caller cuts, reads the cut whole, flags and records access)
        results.sort(key=lambda r: -r.score)
        if q.archived != "hidden":
            return _few_summaries(results, rc.summaries_shown)
        return results

    def _time_seeds(self, q: Query, statuses: tuple[Status, ...]) -> set[str]:
        """Memories of the time the query names, as candidates (issue 49): their event time
        in the window, a few days before it (a time remembered a little wrong) or up to
        ``time_reach_days`` after it (they may mention it), oldest first; ranking decides
        whether they are relevant."""
        rc = self.config.retrieval
        if q.window is None or not self.config.tuning.time_pool:
            return set()
        spec = ListSpec(statuses=statuses, tiers=q.tiers,
                        since=q.window.start - timedelta(days=rc.time_reach_before_days),
                        until=q.window.end + timedelta(days=rc.time_reach_days),
                        sort="created_at", descending=False,
                        limit=self.config.tuning.time_pool)
        return {m.id for m in self.store.list_page(q.namespace, spec)}

    def _below_successors(self, ns: str, results: list[_Ranked]) -> None:
        """A superseded memory ranks below the memory that superseded it when both are
        candidates, whatever fusion did with two near-equal texts (ADR 0059): the old
        password never shows above the new one."""
        invalid = [r.candidate.id for r in results if "invalid" in r.terms]
        if not invalid:
            return
        successor = {i: m.superseded_by for i, m in self.store.get_memories(ns, invalid).items()
                     if m.superseded_by is not None}
        score = {r.candidate.id: r.score for r in results}
        for _ in range(len(successor)):  # a chain settles in as many passes as it is long
            moved = False
            for n, r in enumerate(results):
                after = successor.get(r.candidate.id)
                if after in score and score[r.candidate.id] >= score[after]:
                    score[r.candidate.id] = score[after] - 1e-6
                    results[n] = r._replace(score=score[r.candidate.id])
                    moved = True
            if not moved:
                break

    def _results(self, ns: str, ranked: list[_Ranked]) -> list[RetrievalResult]:
        """The cut's results with their whole memories: one read of the few that are
        returned (ADR 0041); a memory deleted since it was ranked drops out."""
        missing = [r.candidate.id for r in ranked if r.candidate.memory is None]
        whole = self.store.get_memories(ns, missing) if missing else {}
        out = []
        for r in ranked:
            m = r.candidate.memory or whole.get(r.candidate.id)
            if m is not None:
                out.append(RetrievalResult(m, r.score, r.terms, r.path,
                                           reasons=dict(r.reasons or {})))
        return out

    def _lineage(self, ns: str, archived: list[Candidate]) -> dict[str, str]:
        """archived (or expired) id -> the active summary that stands for it (only those that
        have one: a memory no summary covers is not reachable this way)."""
        if not archived:
            return {}
        ids = {m.id for m in archived}
        edges = [e for e in self.store.edges_of(ns, ids, [RelationType.SUMMARIZES])
                 if e.target_id in ids]
        summaries = self.store.get_memories(ns, list({e.source_id for e in edges}))
        out: dict[str, str] = {}
        for e in sorted(edges, key=lambda e: e.source_id):
            s = summaries.get(e.source_id)
            if s is not None and s.status is Status.ACTIVE:
                out.setdefault(e.target_id, e.source_id)
        return out

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

    # -- helpers --------------------------------------------------------------------------
    def _keep(self, m: Candidate, q: Query, lineage: Mapping[str, str], now: datetime
              ) -> bool:
        if m.status is not Status.ACTIVE and m.id not in lineage:
            return False
        if m.expires_at is not None and m.expires_at <= now:  # its own TTL ran out (issue 48)
            return False
        if q.tiers is not None and m.tier not in q.tiers:
            return False
        f = q.filters
        for name in ("source", "session_id", "topic"):
            if name in f and getattr(m, name) != f[name]:
                return False
        if "kind" in f and m.kind.value != f["kind"]:
            return False
        if "type" in f and m.type not in f["type"]:
            return False
        if ("since" in f and m.created_at < f["since"]) or (
                "until" in f and m.created_at >= f["until"]):
            return False
        if q.as_of is not None and (m.created_at > q.as_of or not m.valid_at(q.as_of)):
            return False
        meta = f.get("metadata") or {}
        return all(m.metadata.get(k) == val for k, val in meta.items())

    def _over_budget(self, seed_terms: list[str], stats: Any) -> bool:
        """Even the rarest term has more postings than ``seed_postings``: ranking them all
        would cost time linear in the namespace, so the newest matches seed (ADR 0011)."""
        if not seed_terms or stats is None:
            return False
        used = sum(stats[0].df.get(t, 0) + stats[1].df.get(t, 0) for t in seed_terms)
        return used > self.config.tuning.seed_postings

    def _seed_terms(self, terms: list[str], stats: Any) -> list[str]:
        """Terms worth a full-text lookup: present, rarest first, while their postings (summed
        document frequencies) fit ``seed_postings`` - the index scores every posting, and the
        common terms that would blow the budget rank least. The rarest term always stays.
        Every query term still counts in the rerank's BM25."""
        if not terms or stats is None:
            return []
        df = {t: stats[0].df.get(t, 0) + stats[1].df.get(t, 0) for t in terms}
        present = sorted((t for t in terms if df[t] > 0), key=lambda t: df[t])
        chosen: list[str] = []
        used = 0
        for t in present:
            if chosen and used + df[t] > self.config.tuning.seed_postings:
                break
            chosen.append(t)
            used += df[t]
        return chosen

    def _rescore_keyword(self, terms: list[str], stats: Any,
                         found: list[tuple[str, str, str]]) -> list[tuple[str, float]]:
        """The full-text index's candidates (id, keywords, context_keywords) ranked by the
        namespace's own BM25 (the rerank's formula and field weights): the index only finds,
        so every engine (FTS5, Lucene and RediSearch score differently) seeds the same
        memories in the same order (ADR 0007)."""
        if not found or stats is None:
            return []
        rc = self.config.retrieval
        w0, w1 = rc.bm25_field_weights
        kw = bm25(terms, {i: self._split(f) for i, f, _ in found}, stats[0].df,
                  stats[0].docs, stats[0].avg_length, k1=rc.bm25_k1, b=rc.bm25_b)
        ctx = bm25(terms, {i: self._split(f) for i, _, f in found}, stats[1].df,
                   stats[1].docs, stats[1].avg_length, k1=rc.bm25_k1, b=rc.bm25_b)
        scored = {i: w0 * kw.get(i, 0.0) + w1 * ctx.get(i, 0.0) for i, _, _ in found}
        return sorted(scored.items(), key=lambda x: (-x[1], x[0]))

    def _keyword_terms(self, terms: list[str], stats: Any, memories: list[Candidate]
                       ) -> tuple[dict[str, float], dict[str, float]]:
        """BM25 (k1, b from config) of the candidates' keyword and context fields."""
        if not terms or stats is None:
            return {}, {}
        rc = self.config.retrieval
        out = []
        for f, field_stats in enumerate(stats):
            docs = {m.id: self._split(m.keywords if f == 0 else m.context_keywords)
                    for m in memories}
            out.append(bm25(terms, docs, field_stats.df, field_stats.docs,
                            field_stats.avg_length, k1=rc.bm25_k1, b=rc.bm25_b))
        return out[0], out[1]

    @staticmethod
    def _source_boost(text: str, memories: list[Candidate]) -> str | None:
        """The one source (speaker / agent) among the candidates that the query names."""
        sources = {m.source for m in memories if m.source}
        named = [s for s in sources
                 if re.search(r"(?<!\w)" + re.escape(s) + r"(?!\w)", text, re.IGNORECASE)]
        return named[0] if len(named) == 1 else None

    def _flag_disputes(self, ns: str, results: list[RetrievalResult]) -> None:
        if not results:
            return
        ids = {r.memory.id for r in results}
        against: dict[str, set[str]] = {}
        for e in self.store.edges_of(ns, ids, [RelationType.CONTRADICTS]):
            against.setdefault(e.source_id, set()).add(e.target_id)
            against.setdefault(e.target_id, set()).add(e.source_id)
        for r in results:
            others = against.get(r.memory.id)
            if others:
                r.disputed = True
                r.disputed_by = tuple(sorted(others))


def _any_expired(results: list[RetrievalResult], now: datetime) -> bool:
    """Whether a result's own TTL has run out by ``now`` (a cached answer is stale then)."""
    return any(r.memory.expires_at is not None and r.memory.expires_at <= now
               for r in results)


def _few_summaries(results: list[_Ranked], shown: int) -> list[_Ranked]:
    """Where the members of summaries are reached themselves, the best ``shown`` summaries
    keep their places and the others follow every other result (ADR 0059): an overview
    still answers, and a run's summaries no longer fill the places of what they stand for."""
    head: list[_Ranked] = []
    rest: list[_Ranked] = []
    for r in results:
        if r.candidate.kind is Kind.SUMMARY and shown <= 0:
            rest.append(r)
            continue
        shown -= r.candidate.kind is Kind.SUMMARY
        head.append(r)
    return head + rest


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
