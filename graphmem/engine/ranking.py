"""The ranking of a retrieval as named pure stages (SPEC §5): given the store port, the query
and the config, no caches, pools or threads (``Retriever`` serves it).

1. ``keyword_seeds``: the query's analysed terms, their statistics and the keyword top-k (BM25
   over the keyword and context fields; needs no vector);
2. ``seeds``: vector top-k (content and context embeddings) and the keyword seeds, fused by
   RRF; seeds below ``min_similarity`` without a keyword match are dropped;
3. ``walk``: a bounded walk (depth 0..2) over typed, weighted edges from the best seeds;
4. ``candidates``: the seeds, what the walk reached and the memories of the time the query
   names, read with their cosines and kept if they pass the query's filters;
5. ``rerank``: every candidate gets its terms; semantic and keyword signals are fused (z-scores
   over the candidates, or RRF), a share of each FOLLOWS neighbour's fused relevance is added,
   and the best relevance that reaches it over typed edges (``walk``: CAUSES, REFERENCES, ...);
   then the weighted priors (graph proximity by personalised PageRank, decayed importance,
   recency, popularity, tier, named source);
6. ``order``: successors above what they superseded, best first, few summaries; the strategy
   cuts (``answer``), and the results get their whole memories and ``disputed`` flags.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import numpy as np

from graphmem.config import GraphMemConfig
from graphmem.engine.walk import Reached, bounded_walk, personalised_pagerank, propagate
from graphmem.models import (
    TIER_ORDER,
    Candidate,
    Kind,
    PathStep,
    Relation,
    RelationType,
    RetrievalResult,
    Status,
    TermStats,
    Tier,
    WalkPath,
)
from graphmem.rules import fusion, scoring
from graphmem.rules.bm25 import bm25
from graphmem.rules.text import Analyzer
from graphmem.rules.tiers import age_hours, decayed_importance
from graphmem.rules.time_expr import TimeSpan
from graphmem.rules.time_prior import keyword_query, proximity
from graphmem.store.base import Beside, ListSpec, MemoryStore

STRATEGIES = ("weighted", "fast_first", "comprehensive")
#: the keyword and context fields' collection statistics for the query's terms
Stats = tuple[TermStats, TermStats]


@dataclass(slots=True, frozen=True)
class Query:
    """One retrieval request, validated and with the configured defaults filled in
    (``Retriever.query`` builds it).

    Example:
        >>> q = Query("deploy", "ops", 5, None, 0.3, "weighted", 1, {})
        >>> q.limit, q.strategy, q.key()[:3]
        (5, 'weighted', ('ops', 'deploy', 5))
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

    @property
    def statuses(self) -> tuple[Status, ...]:
        """What the search reads: active memories, or all when archived ones may be reached."""
        return (Status.ACTIVE,) if self.archived == "hidden" else tuple(Status)

    def key(self) -> tuple[Any, ...]:
        """Everything that decides the answer (the hot cache's key)."""
        filters = tuple(sorted((k, repr(v)) for k, v in self.filters.items()))
        return (self.namespace, self.text, self.limit, self.tiers, self.min_similarity,
                self.strategy, self.depth, filters, self.archived, self.as_of, self.window)


class Ranked(NamedTuple):
    """A candidate scored: its terms and the path the walk reached it by.

    Example:
        >>> from graphmem.models import Memory
        >>> seed = Candidate.of(Memory(id="m1", namespace="ops", content="x"))
        >>> Ranked(seed, 0.9, {"semantic": 0.9}, WalkPath(("m1",))).path.is_seed
        True
    """

    candidate: Candidate
    score: float
    terms: dict[str, float]
    path: WalkPath
    #: a term's reason in words, by term (``RetrievalResult.reasons``)
    reasons: dict[str, str] | None = None


class Keywords(NamedTuple):
    """A query's analysed terms, their collection statistics and its keyword seeds.

    Example:
        >>> Keywords(["ship"], None, [("m1", 2.0)]).seeds
        [('m1', 2.0)]
    """

    terms: list[str]
    stats: Stats | None
    seeds: list[tuple[str, float]]


class _Walked(NamedTuple):
    """The seeds, the edges around them and what the walk reached."""

    ordered: list[str]
    seeds: dict[str, float]
    edges: list[Relation]
    reached: dict[str, Reached]


class _Pool(NamedTuple):
    """The candidates that pass the query's filters (sorted: ties break alike), read whole."""

    ids: list[str]
    memories: dict[str, Candidate]
    cosines: dict[str, tuple[float, float | None]]
    #: archived id -> the active summary that stands for it
    lineage: dict[str, str]
    now: datetime


def _split(field: str) -> tuple[str, ...]:
    return tuple(field.split())


class Ranking:
    """The stages of one retrieval over the store port, driven by the query's strategy.
    ``split``: a keyword field's terms (the serving side may memoise it).

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> mem = GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder())
        >>> m = mem.store("the deploy failed", namespace="ops")
        >>> c = mem.core
        >>> ranking = Ranking(c.store, c.analyzer, c.config, c.clock)
        >>> q = Query("deploy", "ops", 5, None, 0.3, "weighted", 1, {})
        >>> [r.memory.id for r in ranking.answer(q, c.embedder.embed(["deploy"])[0])] == [m.id]
        True
        >>> mem.close()
    """

    def __init__(self, store: MemoryStore, analyzer: Analyzer, config: GraphMemConfig,
                 clock: Callable[[], datetime],
                 split: Callable[[str], tuple[str, ...]] = _split,
                 beside: Beside | None = None) -> None:
        self.store = store
        self.analyzer = analyzer
        self.config = config
        self.clock = clock
        self.split = split
        #: where the store may run one of a seed search's parts meanwhile (ADR 0070)
        self.beside = beside

    def answer(self, q: Query, vec: np.ndarray) -> list[RetrievalResult]:
        """The query's results, cut to its limit and flagged where disputed."""
        if q.strategy == "fast_first":
            results = self.fall_through(q, vec)
        else:
            results = self.results(q.namespace, self.rank(q, vec)[: q.limit])
        self.flag_disputes(q.namespace, results)
        return results

    def fall_through(self, q: Query, vec: np.ndarray) -> list[RetrievalResult]:
        """``fast_first`` (the seeds' meaning): search the fastest wanted tier alone, and the
        next slower one only while fewer than ``limit`` results pass ``min_similarity``.
        Results keep tier order (faster first), by score within a tier."""
        out: list[RetrievalResult] = []
        passing = 0
        for tier in TIER_ORDER:
            if q.tiers is not None and tier not in q.tiers:
                continue
            found = self.results(q.namespace, self.rank(replace(q, tiers=(tier,)), vec)
                                 [: q.limit - len(out)])
            out.extend(found)
            passing += sum(r.terms["semantic"] >= q.min_similarity for r in found)
            if passing >= q.limit or len(out) >= q.limit:
                break
        return out

    def rank(self, q: Query, vec: np.ndarray) -> list[Ranked]:
        """Every candidate of the query, scored and sorted best first: seeds, walk,
        candidates, rerank, order."""
        ordered, seeds, keywords = self.seeds(q, vec)
        if not seeds:
            return []
        walked = self.walk(q, ordered, seeds)
        pool = self.candidates(q, vec, walked)
        if not pool.ids:
            return []
        return self.order(q, self.rerank(q, keywords, walked, pool))

    # -- stages ---------------------------------------------------------------------------
    def keyword_seeds(self, q: Query) -> Keywords:
        """The query's terms, their statistics, the terms that seed and the keyword seeds
        ranked by the namespace's BM25 (none of it needs the query's vector)."""
        rc = self.config.retrieval
        terms = self.analyzer.query_terms(keyword_query(q.text, q.window))
        stats = self.store.keyword_stats(q.namespace, terms) if terms else None
        seed_terms, newest = self._seed_terms(terms, stats)
        asked = (self.config.tuning.newest_pool if newest else
                 self.config.tuning.keyword_pool or self.store.keyword_pool)
        found = self.store.keyword_candidates(q.namespace, seed_terms, max(rc.keyword_k, asked),
                                              tiers=q.tiers, statuses=q.statuses, newest=newest)
        keyword = self._rescore_keyword(seed_terms, stats, found)[: rc.keyword_k]
        return Keywords(terms, stats, keyword)

    def seeds(self, q: Query, vec: np.ndarray) -> tuple[list[str], dict[str, float], Keywords]:
        """Vector and keyword seeds fused by RRF (more vector seeds when filters will drop
        some): every seed in fused order, the best with their scores, the keyword part."""
        rc = self.config.retrieval
        vector_k = rc.vector_k * (self.config.tuning.filtered_widen if q.filters or q.as_of else 1)
        dense, context = self.store.vector_topk_fields(q.namespace, vec, vector_k,
                                                       tiers=q.tiers, statuses=q.statuses,
                                                       beside=self.beside)
        keywords = self.keyword_seeds(q)
        ordered, seeds = scoring.seeds(dense, context, keywords.seeds, q.min_similarity,
                                       rc.rrf_k, rc.seeds)
        return ordered, seeds, keywords

    def walk(self, q: Query, ordered: list[str], seeds: dict[str, float]) -> _Walked:
        """The edges within ``depth`` hops of the seeds and the best path to each node."""
        rc = self.config.retrieval
        edges = (self.store.neighbourhood(q.namespace, seeds, q.depth,
                                          max_nodes=rc.max_walk_nodes) if q.depth > 0 else [])
        reached = bounded_walk(seeds, edges, q.depth, rc.edge_weights, rc.hop_decay,
                               rc.max_walk_nodes)
        return _Walked(ordered, seeds, edges, reached)

    def candidates(self, q: Query, vec: np.ndarray, walked: _Walked) -> _Pool:
        """Seeds, walked and time-window memories, read with their cosines and kept if they
        pass the query's filters."""
        ns = q.namespace
        pool = set(walked.ordered) | set(walked.reached) | self._time_seeds(q)
        memories, cosines = self.store.get_scored(ns, sorted(pool), vec)
        lineage = self._lineage(ns, [m for m in memories.values()
                                     if m.status is not Status.ACTIVE]) \
            if q.archived != "hidden" else {}
        now = self.clock()
        # sorted: ties break alike on every run
        ids = sorted(i for i in pool if i in memories and _keep(memories[i], q, lineage, now))
        return _Pool(ids, memories, cosines, lineage, now)

    def rerank(self, q: Query, keywords: Keywords, walked: _Walked, pool: _Pool
               ) -> list[Ranked]:
        """Every candidate's terms and score (``rules/scoring``), unordered."""
        rc = self.config.retrieval
        w = rc.weights
        cands, memories, now = pool.ids, pool.memories, pool.now
        edges, reached, lineage = walked.edges, walked.reached, pool.lineage
        cosines = {i: pool.cosines.get(i, (0.0, None)) for i in cands}
        sem = {i: on_content for i, (on_content, _) in cosines.items()}
        ctx_sem = {i: on_content if on_context is None else on_context
                   for i, (on_content, on_context) in cosines.items()}
        kw, ctx_kw = self._keyword_terms(keywords.terms, keywords.stats,
                                         [memories[i] for i in cands])
        relevance = scoring.relevance([sem, kw, ctx_sem, ctx_kw], [
            w.semantic, w.keyword, w.context_semantic, w.context_keyword], cands, rc)
        cand_set = set(cands)
        follows = scoring.follows(relevance, edges, cands, rc.follows_share)
        walked_terms = propagate(relevance, edges, q.depth, rc.edge_weights, rc.hop_decay,
                                 skip=rc.walk_skip)
        ppr = personalised_pagerank(cands, edges, {i: s for i, s in walked.seeds.items()
                                                   if i in cand_set},
                                    rc.edge_weights, alpha=rc.pagerank_alpha)
        graph = fusion.normalise_max(ppr)
        source = _source_boost(q.text, [memories[i] for i in cands])
        max_access = max((memories[i].access_count for i in cands), default=0)
        computed = self.config.importance.computed
        pairs = scoring.weighted(w)
        results: list[Ranked] = []
        for i in cands:
            m = memories[i]
            age_h = max(0.0, (now - m.created_at).total_seconds() / 3600)
            terms_i = {
                "semantic": sem[i], "keyword": kw.get(i, 0.0),
                "context_semantic": ctx_sem[i], "context_keyword": ctx_kw.get(i, 0.0),
                "relevance": relevance[i], "follows": follows[i], "walk": walked_terms[i],
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
            why = ""  # the time term's reason in words
            if q.window is not None:  # the time the query names (issue 49, ADR 0061)
                near, why = proximity(q.window, m.created_at, m.mentioned)
                terms_i["time"] = near
                score += w.time * near
            if i in lineage:  # an archived memory, reached through its summary
                if q.archived == "below":  # the default view: below active peers (ADR 0059)
                    score -= w.archived
                    terms_i["archived"] = 1.0
                path = WalkPath(nodes=(lineage[i], i),
                                steps=(PathStep(RelationType.SUMMARIZES, True),))
            else:
                path = reached[i].path if i in reached else WalkPath(nodes=(i,))
            results.append(Ranked(m, score, terms_i, path, {"time": why} if why else None))
        return results

    def order(self, q: Query, results: list[Ranked]) -> list[Ranked]:
        """Successors above what they superseded, best first, then few summaries."""
        if q.as_of is None:
            self._below_successors(q.namespace, results)
        results.sort(key=lambda r: -r.score)
        if q.archived != "hidden":
            return _few_summaries(results, self.config.retrieval.summaries_shown)
        return results

    def results(self, ns: str, ranked: list[Ranked]) -> list[RetrievalResult]:
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

    def flag_disputes(self, ns: str, results: list[RetrievalResult]) -> None:
        """Results with a CONTRADICTS edge are ``disputed`` by the other ends."""
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

    # -- helpers --------------------------------------------------------------------------
    def _time_seeds(self, q: Query) -> set[str]:
        """Memories of the time the query names, as candidates (issue 49): their event time
        in the window, a few days before it (a time remembered a little wrong) or up to
        ``time_reach_days`` after it (they may mention it), oldest first; ranking decides
        whether they are relevant."""
        rc = self.config.retrieval
        if q.window is None or not self.config.tuning.time_pool:
            return set()
        spec = ListSpec(statuses=q.statuses, tiers=q.tiers,
                        since=q.window.start - timedelta(days=rc.time_reach_before_days),
                        until=q.window.end + timedelta(days=rc.time_reach_days),
                        sort="created_at", descending=False,
                        limit=self.config.tuning.time_pool)
        return {m.id for m in self.store.list_page(q.namespace, spec)}

    def _below_successors(self, ns: str, results: list[Ranked]) -> None:
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

    def _seed_terms(self, terms: list[str], stats: Stats | None) -> tuple[list[str], bool]:
        """Terms worth a full-text lookup: present, rarest first, while their postings (summed
        document frequencies) fit ``seed_postings`` - the index scores every posting, and the
        common terms that would blow the budget rank least. The rarest term always stays.
        Every query term still counts in the rerank's BM25. And whether even the rarest term
        has more postings than that: ranking them all would cost time linear in the
        namespace, so the newest matches seed (ADR 0011)."""
        if not terms or stats is None:
            return [], False
        df = {t: stats[0].df.get(t, 0) + stats[1].df.get(t, 0) for t in terms}
        present = sorted((t for t in terms if df[t] > 0), key=lambda t: df[t])
        chosen: list[str] = []
        used = 0
        for t in present:
            if chosen and used + df[t] > self.config.tuning.seed_postings:
                break
            chosen.append(t)
            used += df[t]
        return chosen, used > self.config.tuning.seed_postings

    def _rescore_keyword(self, terms: list[str], stats: Stats | None,
                         found: list[tuple[str, str, str]]) -> list[tuple[str, float]]:
        """The full-text index's candidates (id, keywords, context_keywords) ranked by the
        namespace's own BM25 (the rerank's formula and field weights): the index only finds,
        so every engine (FTS5, Lucene and RediSearch score differently) seeds the same
        memories in the same order (ADR 0007)."""
        if not found or stats is None:
            return []
        w0, w1 = self.config.retrieval.bm25_field_weights
        kw, ctx = self._bm25(terms, stats, found)
        scored = {i: w0 * kw.get(i, 0.0) + w1 * ctx.get(i, 0.0) for i, _, _ in found}
        return sorted(scored.items(), key=lambda x: (-x[1], x[0]))

    def _keyword_terms(self, terms: list[str], stats: Stats | None,
                       memories: list[Candidate]) -> tuple[dict[str, float], dict[str, float]]:
        """BM25 (k1, b from config) of the candidates' keyword and context fields."""
        if not terms or stats is None:
            return {}, {}
        return self._bm25(terms, stats, [(m.id, m.keywords, m.context_keywords)
                                         for m in memories])

    def _bm25(self, terms: list[str], stats: Stats, docs: list[tuple[str, str, str]]
              ) -> tuple[dict[str, float], dict[str, float]]:
        """BM25 of (id, keywords, context keywords) documents' two fields."""
        rc = self.config.retrieval
        kw, ctx = (bm25(terms, {d[0]: self.split(d[f + 1]) for d in docs}, s.df, s.docs,
                        s.avg_length, k1=rc.bm25_k1, b=rc.bm25_b) for f, s in enumerate(stats))
        return kw, ctx


def _keep(m: Candidate, q: Query, lineage: Mapping[str, str], now: datetime) -> bool:
    """Whether a candidate passes the query's status, TTL, tier, filters and ``as_of``."""
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


def _source_boost(text: str, memories: list[Candidate]) -> str | None:
    """The one source (speaker / agent) among the candidates that the query names."""
    sources = {m.source for m in memories if m.source}
    named = [s for s in sources
             if re.search(r"(?<!\w)" + re.escape(s) + r"(?!\w)", text, re.IGNORECASE)]
    return named[0] if len(named) == 1 else None


def _few_summaries(results: list[Ranked], shown: int) -> list[Ranked]:
    """Where the members of summaries are reached themselves, the best ``shown`` summaries
    keep their places and the others follow every other result (ADR 0059): an overview
    still answers, and a run's summaries no longer fill the places of what they stand for."""
    head: list[Ranked] = []
    rest: list[Ranked] = []
    for r in results:
        summary = r.candidate.kind is Kind.SUMMARY
        (rest if summary and shown <= 0 else head).append(r)
        shown -= summary
    return head + rest
