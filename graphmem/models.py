"""Domain model: memories, relations, tiers, and what retrieval returns.

Records are plain dataclasses (fast to build in bulk, easy to serialise); validation of caller
input lives in ``graphmem.rules.validation`` because its bounds come from configuration.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from operator import attrgetter
from typing import Any

import numpy as np

from graphmem.errors import ValidationError


class Tier(enum.StrEnum):
    """A memory's tier, fastest first: its half-life, retention and capacity come from
    ``TiersConfig``.

    Example:
        >>> Tier("slow").rank
        2
        >>> [t.value for t in TIER_ORDER]
        ['fast', 'medium', 'slow', 'glacial']
    """

    FAST = "fast"
    MEDIUM = "medium"
    SLOW = "slow"
    GLACIAL = "glacial"

    @property
    def rank(self) -> int:
        """0 for the fastest tier, 3 for the slowest."""
        return TIER_ORDER.index(self)


TIER_ORDER: tuple[Tier, ...] = (Tier.FAST, Tier.MEDIUM, Tier.SLOW, Tier.GLACIAL)


class Status(enum.StrEnum):
    """Whether a memory is in the active set; archived and expired ones can be restored.

    Example:
        >>> Status("archived") is Status.ARCHIVED
        True
    """

    ACTIVE = "active"
    ARCHIVED = "archived"
    EXPIRED = "expired"


class Kind(enum.StrEnum):
    """A plain memory, or a summary that consolidation wrote to stand for its members.

    Example:
        >>> Kind.SUMMARY.value
        'summary'
    """

    MEMORY = "memory"
    SUMMARY = "summary"


#: the seeds' memory types (``Memory.type`` is an open vocabulary: any lower-case word of
#: ``validation.TYPE_PATTERN`` is accepted; these get entry defaults in ``TypesConfig``)
TYPES: tuple[str, ...] = ("observation", "decision", "pattern", "reflexion", "conflict",
                          "tool_usage", "consensus", "dissent", "summary")


class RelationType(enum.StrEnum):
    """The allow-list of relationship types; nothing else ever reaches a query.

    Example:
        >>> RelationType("CAUSES") is RelationType.CAUSES
        True
    """

    CAUSES = "CAUSES"
    REFERENCES = "REFERENCES"
    SIMILAR_TO = "SIMILAR_TO"
    CONTRADICTS = "CONTRADICTS"
    SUMMARIZES = "SUMMARIZES"
    FOLLOWS = "FOLLOWS"


#: Types a caller may create with ``relate`` / ``relations=``; the others are made by graphmem.
CALLER_RELATION_TYPES = frozenset(
    {RelationType.CAUSES, RelationType.REFERENCES, RelationType.SIMILAR_TO,
     RelationType.CONTRADICTS}
)


class EdgeSource(enum.StrEnum):
    """Who made an edge: the caller (``explicit``) or graphmem itself (``auto``).

    Example:
        >>> EdgeSource.AUTO.value
        'auto'
    """

    EXPLICIT = "explicit"
    AUTO = "auto"


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(slots=True)
class Memory:
    """One memory node. ``embedding`` is normalised float32 (384 dims with the default model).

    Example:
        >>> m = Memory(id="m1", namespace="ops", content="the deploy failed", tier=Tier.FAST)
        >>> m.copy(importance=0.9).importance, m.to_dict()["tier"]
        (0.9, 'fast')
    """

    id: str
    namespace: str
    content: str
    kind: Kind = Kind.MEMORY
    tier: Tier = Tier.MEDIUM
    base_importance: float = 0.5
    importance: float = 0.5
    pinned: bool = False
    created_at: datetime = field(default_factory=utcnow)
    updated_at: datetime = field(default_factory=utcnow)
    last_accessed_at: datetime = field(default_factory=utcnow)
    access_count: int = 0
    surprise_score: float = 0.0
    success_count: int = 0
    failure_count: int = 0
    last_promoted_at: datetime | None = None
    source: str | None = None
    topic: str | None = None
    session_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    status: Status = Status.ACTIVE
    content_hash: str = ""
    embedding: np.ndarray | None = field(default=None, repr=False)
    # Derived index fields (see ADR 0002): analysed keywords of the content (with its date) and
    # of "predecessor in the session + this memory", and the embedding of that context text.
    keywords: str = field(default="", repr=False)
    context_keywords: str = field(default="", repr=False)
    context_embedding: np.ndarray | None = field(default=None, repr=False)
    # Tier dynamics (ADR 0004): the access window that counts accesses within the tier's
    # half-life, and the relevance retrieval predicted for the memory last time (for surprise).
    window_start: datetime | None = None
    window_count: int = 0
    last_predicted: float | None = None
    # Lifecycle clocks (ADR 0006): when the memory was stored here (retention, TTL and
    # consolidation age count from it, never from the event time ``created_at``), and when it
    # was last reinforced by use (the decay age counts from it; a retrieval that merely shows
    # the memory does not reinforce it).
    stored_at: datetime = field(default_factory=utcnow)
    reinforced_at: datetime = field(default_factory=utcnow)
    # What agents remember (ADR 0013): the memory's type (an open vocabulary, ``TYPES`` are the
    # seeds' defaults), and the period in which what it says holds (``valid_from`` None: from
    # its event time; ``valid_until`` None: still valid); ``superseded_by``: the memory that
    # replaced it (``supersede``).
    type: str = "observation"
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    superseded_by: str | None = None
    # Shared namespaces (seed 003): the agents that used the memory (read it in full or gave
    # feedback) -> when last, epoch seconds; kept for the promotion window, at most
    # ``MAX_USERS`` (the most recent)
    used_by: dict[str, float] = field(default_factory=dict)
    # Times the content mentions (ADR 0061), relative ones resolved against ``created_at`` at
    # write time ("yesterday" written on 2023-08-28 -> 2023-08-27): (start, end) pairs, end
    # exclusive; a query naming a time lifts the memories whose event or mentioned time is in it
    mentioned: tuple[tuple[datetime, datetime], ...] = ()
    # A memory's own TTL (ADR 0067): from then on (``expires_at <= now``) reads leave it out
    # and show it ``expired``, and maintenance marks it so; None: it never expires by time
    expires_at: datetime | None = None

    def copy(self, **changes: Any) -> Memory:
        return replace(self, **changes)

    def expired_at(self, now: datetime) -> bool:
        """Whether the memory's own TTL ran out by ``now``.

        Example:
            >>> m = Memory(id="m1", namespace="ops", content="x")
            >>> m.expired_at(m.created_at), m.copy(expires_at=m.created_at).expired_at(m.created_at)
            (False, True)
        """
        return self.expires_at is not None and self.expires_at <= now

    def valid_at(self, at: datetime) -> bool:
        """Whether what the memory says holds at ``at`` (its validity period contains it).

        Example:
            >>> from datetime import timedelta
            >>> m = Memory(id="m1", namespace="ops", content="x")
            >>> m.valid_at(m.created_at), m.valid_at(m.created_at - timedelta(days=1))
            (True, False)
        """
        return _holds(self.valid_from or self.created_at, self.valid_until, at)

    def to_dict(self, *, embeddings: bool = False) -> dict[str, Any]:
        """A JSON-ready dict; embeddings and index fields only when asked for (then every
        field, in the declared order).

        The fields are read at once and only the times, enums and dicts converted, by
        positions worked out once from the annotations: the loop over ``fields()`` with a
        type test per field was a hot spot of every REST search (ADR 0053).
        """
        values = list(_SHOWN_GET(self))
        for i in _SHOWN_TIMES:
            v = values[i]
            if v is not None:
                values[i] = v.isoformat()
        for i in _SHOWN_ENUMS:
            v = values[i]
            if isinstance(v, enum.Enum):
                values[i] = v.value
        for i in _SHOWN_DICTS:
            values[i] = dict(values[i])
        values[_SHOWN_MENTIONED] = spans_dict(values[_SHOWN_MENTIONED])
        out = dict(zip(_SHOWN, values, strict=True))
        if not embeddings:
            return out
        for name in _INDEX_FIELDS:
            v = getattr(self, name)
            out[name] = [float(x) for x in v] if isinstance(v, np.ndarray) else v
        return {name: out[name] for name in _FIELDS}


#: ``Memory.to_dict``'s fast path: the fields a response shows, in order, and the positions
#: of those it converts (times, enums, dicts), from the annotations
_INDEX_FIELDS = ("embedding", "context_embedding", "keywords", "context_keywords")
_FIELDS = tuple(f.name for f in fields(Memory))
_SHOWN = tuple(f.name for f in fields(Memory) if f.name not in _INDEX_FIELDS)
_TYPES = {f.name: str(f.type) for f in fields(Memory)}
_SHOWN_GET = attrgetter(*_SHOWN)
_SHOWN_TIMES = tuple(i for i, n in enumerate(_SHOWN) if _TYPES[n].startswith("datetime"))
_SHOWN_ENUMS = tuple(i for i, n in enumerate(_SHOWN)
                     if isinstance(globals().get(_TYPES[n]), enum.EnumType))
_SHOWN_DICTS = tuple(i for i, n in enumerate(_SHOWN) if _TYPES[n].startswith("dict"))
_SHOWN_MENTIONED = _SHOWN.index("mentioned")


def _plain_fields(record: Any) -> dict[str, Any]:
    """A flat record's fields as JSON, in their order: times as ISO 8601, enums as their
    values, tuples as lists."""
    out: dict[str, Any] = {}
    for f in fields(record):
        value = getattr(record, f.name)
        if isinstance(value, datetime):
            value = value.isoformat()
        elif isinstance(value, enum.Enum):
            value = value.value
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def spans_dict(spans: Any) -> list[dict[str, str]]:
    """Mentioned times as JSON: ``[{"start": iso, "end": iso}, ...]`` (end exclusive).

    Example:
        >>> t = datetime(2023, 8, 27, tzinfo=UTC)
        >>> spans_dict([(t, t.replace(day=28))])[0]["end"]
        '2023-08-28T00:00:00+00:00'
    """
    return [{"start": a.isoformat(), "end": b.isoformat()} for a, b in spans]


@dataclass(slots=True, frozen=True)
class TermStats:
    """Collection statistics for some query terms: documents, average length, document
    frequencies (the store reads them, ``rules.bm25`` scores with them).

    Example:
        >>> TermStats(docs=100, avg_length=12.0, df={"deploy": 3}).df["deploy"]
        3
    """

    docs: int
    avg_length: float
    df: dict[str, int]


@dataclass(slots=True, frozen=True)
class Relation:
    """A typed, directed edge between two memories of one namespace.

    Example:
        >>> r = Relation("m1", "m2", RelationType.CAUSES, "ops")
        >>> r.key, r.to_dict()["source"]
        (('m1', 'm2', <RelationType.CAUSES: 'CAUSES'>), 'explicit')
    """

    source_id: str
    target_id: str
    type: RelationType
    namespace: str
    score: float | None = None
    created_at: datetime = field(default_factory=utcnow)
    source: EdgeSource = EdgeSource.EXPLICIT

    @property
    def key(self) -> tuple[str, str, RelationType]:
        return (self.source_id, self.target_id, self.type)

    def to_dict(self) -> dict[str, Any]:
        return _plain_fields(self)


class TransitionKind(enum.StrEnum):
    """What moved a memory between tiers or statuses (every one is recorded).

    Example:
        >>> sorted(k.value for k in TransitionKind)
        ['demotion', 'eviction', 'expiry', 'promotion', 'restore', 'supersede', 'update']
    """

    PROMOTION = "promotion"
    DEMOTION = "demotion"
    EXPIRY = "expiry"
    EVICTION = "eviction"
    RESTORE = "restore"
    #: the content or fields changed (``detail``: the prior content when it changed)
    UPDATE = "update"
    #: another memory replaced it (its validity closed)
    SUPERSEDE = "supersede"


@dataclass(slots=True, frozen=True)
class Transition:
    """One recorded change of a memory's tier or status (or, ``update`` / ``supersede``, of
    its content or validity), with its reason; ``detail`` keeps the prior content of an update.

    Example:
        >>> t = Transition("m1", TransitionKind.PROMOTION, Tier.SLOW, Tier.MEDIUM,
        ...                "accessed 3 times within the half-life", utcnow())
        >>> t.to_dict()["to_tier"]
        'medium'
    """

    memory_id: str
    kind: TransitionKind
    from_tier: Tier
    to_tier: Tier
    reason: str
    at: datetime
    from_status: Status = Status.ACTIVE
    to_status: Status = Status.ACTIVE
    detail: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"memory_id": self.memory_id, "kind": self.kind.value,
                "from_tier": self.from_tier.value, "to_tier": self.to_tier.value,
                "from_status": self.from_status.value, "to_status": self.to_status.value,
                "reason": self.reason, "at": self.at.isoformat(), "detail": self.detail}


@dataclass(slots=True, frozen=True)
class RelationSpec:
    """A relation given at write time, from the memory being written to ``target_id``.

    ``direction="in"`` makes the edge point from the target to the new memory instead.

    Example:
        >>> RelationSpec("CAUSES", "m2").direction
        'out'
    """

    type: RelationType | str
    target_id: str
    direction: str = "out"
    score: float | None = None


@dataclass(slots=True, frozen=True)
class PathStep:
    """One hop of a walk: the edge type and whether it was followed forwards.

    Example:
        >>> PathStep(RelationType.REFERENCES, outgoing=False).outgoing
        False
    """

    type: RelationType
    outgoing: bool  # True: previous node -[type]-> this node; False: previous <-[type]- this


@dataclass(slots=True, frozen=True)
class WalkPath:
    """How retrieval reached a memory: a seed, then zero or more typed hops.

    Example:
        >>> str(WalkPath(("aaaaaaaa1", "bbbbbbbb2"), (PathStep(RelationType.CAUSES, True),)))
        'seed aaaaaaaa -[CAUSES]-> bbbbbbbb'
        >>> WalkPath(("aaaaaaaa1",)).is_seed
        True
    """

    nodes: tuple[str, ...]
    steps: tuple[PathStep, ...] = ()

    @property
    def is_seed(self) -> bool:
        return not self.steps

    def __str__(self) -> str:
        if not self.steps:
            return "seed"
        parts = [f"seed {self.nodes[0][:8]}"]
        for step, node in zip(self.steps, self.nodes[1:], strict=True):
            arrow = f"-[{step.type.value}]->" if step.outgoing else f"<-[{step.type.value}]-"
            parts.append(f"{arrow} {node[:8]}")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": str(self),
            "nodes": list(self.nodes),
            "steps": [{"type": s.type.value, "outgoing": s.outgoing} for s in self.steps],
        }


@dataclass(slots=True)
class Candidate:
    """What retrieval filters and ranks a memory by, read without the rest of the record
    (``MemoryStore.get_scored``; ADR 0041): a retrieval weighs a few hundred candidates and
    returns ten, so only those ten are read whole. ``memory``: the whole record, when the
    store read it anyway (a server's one round trip).

    Example:
        >>> m = Memory(id="m1", namespace="ops", content="x", keywords="deploy")
        >>> c = Candidate.of(m)
        >>> c.keywords, c.valid_at(m.created_at), c.memory is m
        ('deploy', True, True)
    """

    id: str
    status: Status
    tier: Tier
    kind: Kind
    type: str
    source: str | None
    session_id: str | None
    topic: str | None
    created_at: datetime
    valid_from: datetime | None
    valid_until: datetime | None
    importance: float
    base_importance: float
    reinforced_at: datetime
    access_count: int
    keywords: str
    context_keywords: str
    metadata: dict[str, Any]
    mentioned: tuple[tuple[datetime, datetime], ...] = ()
    #: ``Memory.expires_at``: retrieval leaves a memory out once it is past (ADR 0067)
    expires_at: datetime | None = None
    memory: Memory | None = None

    @classmethod
    def of(cls, m: Memory) -> Candidate:
        return cls(m.id, m.status, m.tier, m.kind, m.type, m.source, m.session_id, m.topic,
                   m.created_at, m.valid_from, m.valid_until, m.importance,
                   m.base_importance, m.reinforced_at, m.access_count, m.keywords,
                   m.context_keywords, m.metadata, m.mentioned, m.expires_at, m)

    def valid_at(self, at: datetime) -> bool:
        """``Memory.valid_at``."""
        return _holds(self.valid_from or self.created_at, self.valid_until, at)


def _holds(start: datetime, until: datetime | None, at: datetime) -> bool:
    """Whether ``at`` is in the validity period [start, until)."""
    return start <= at and (until is None or at < until)


@dataclass(slots=True)
class RetrievalResult:
    """One ranked memory: its score, each term of it, the path that reached it, and
    whether another memory disputes it (``CONTRADICTS``).

    Example:
        >>> hit = RetrievalResult(Memory(id="m1", namespace="ops", content="x"), 0.42,
        ...                       {"semantic": 0.3, "keyword": 0.12}, WalkPath(("m1",)))
        >>> hit.id, hit.to_dict()["terms"]["semantic"]
        ('m1', 0.3)
    """

    memory: Memory
    score: float
    terms: dict[str, float]
    path: WalkPath
    disputed: bool = False
    disputed_by: tuple[str, ...] = ()
    #: why a term holds, in words, by term ("time": "inside July 2023")
    reasons: dict[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.memory.id

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory": self.memory.to_dict(),
            "score": self.score,
            "terms": dict(self.terms),
            "path": self.path.to_dict(),
            "disputed": self.disputed,
            "disputed_by": list(self.disputed_by),
            "reasons": dict(self.reasons),
        }


@dataclass(slots=True, frozen=True)
class IndexEntry:
    """A compact preview for progressive disclosure (``search_index``).

    Example:
        >>> e = IndexEntry("m1", "the deploy failed", Tier.FAST, 0.42, 5, utcnow(), None, False)
        >>> e.to_dict()["token_estimate"]
        5
    """

    id: str
    preview: str
    tier: Tier
    score: float
    token_estimate: int
    created_at: datetime
    session_id: str | None
    disputed: bool

    def to_dict(self) -> dict[str, Any]:
        return _plain_fields(self)


@dataclass(slots=True)
class MemoryInput:
    """What a caller gives to write one memory (``store`` / ``store_many``).

    Example:
        >>> MemoryInput("the deploy failed", importance=0.8, session_id="s1").tier is None
        True
    """

    content: str
    #: None: the type's default (``TypesConfig``), else 0.5
    importance: float | None = None
    tier: Tier | str | None = None
    relations: tuple[RelationSpec, ...] | list[Any] = ()
    metadata: dict[str, Any] | None = None
    session_id: str | None = None
    created_at: datetime | None = None
    source: str | None = None
    topic: str | None = None
    pinned: bool = False
    id: str | None = None
    #: None: ``observation`` (its entry tier and importance come from ``TypesConfig``)
    type: str | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    #: seconds the memory lives (ADR 0067): ``expires_at`` = now + ttl; None: no TTL
    ttl: float | None = None

    @classmethod
    def coerce(cls, item: MemoryInput | dict[str, Any] | str) -> MemoryInput:
        if isinstance(item, MemoryInput):
            return item
        if isinstance(item, str):
            return cls(content=item)
        if isinstance(item, dict):
            unknown = set(item) - {f.name for f in fields(cls)}
            if unknown:
                raise ValidationError(f"unknown memory field(s): {', '.join(sorted(unknown))}")
            return cls(**item)
        raise ValidationError(f"cannot read a memory from {type(item).__name__}")


@dataclass(slots=True)
class MemoryPage:
    """One page of a listing (``list_page``, ``stream``); ``next_cursor`` None on the last.

    Example:
        >>> MemoryPage([], None).to_dict()
        {'items': [], 'next_cursor': None}
    """

    items: list[Memory]
    next_cursor: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"items": [m.to_dict() for m in self.items], "next_cursor": self.next_cursor}


@dataclass(slots=True, frozen=True)
class HistoryEntry:
    """One step of a memory's history: ``created``, an ``update`` (``content``: the content
    from then on, when it changed), or a tier / status change (promotion, demotion, expiry,
    eviction, restore, supersede), with its time and reason.

    Example:
        >>> HistoryEntry("created", utcnow(), "stored", "a note").to_dict()["event"]
        'created'
    """

    event: str
    at: datetime
    reason: str
    content: str | None = None
    from_tier: Tier | None = None
    to_tier: Tier | None = None
    from_status: Status | None = None
    to_status: Status | None = None

    def to_dict(self) -> dict[str, Any]:
        return _plain_fields(self)


@dataclass(slots=True)
class ConsensusRecord:
    """A past consensus on a topic, how close it is to the topic asked about, and the
    dissent recorded against it.

    Example:
        >>> c = ConsensusRecord(Memory(id="c1", namespace="ops", content="x"), 0.9, [])
        >>> c.to_dict()["dissent"]
        []
    """

    consensus: Memory
    score: float
    dissent: list[Memory]

    def to_dict(self) -> dict[str, Any]:
        return {"consensus": self.consensus.to_dict(), "score": self.score,
                "dissent": [m.to_dict() for m in self.dissent]}


@dataclass(slots=True, frozen=True)
class StreamSummary:
    """An extractive summary of an agent's (or a session's) memories in a time range, and
    the ids it stands for.

    Example:
        >>> StreamSummary("2 memories: a. b.", ("m1", "m2")).to_dict()["ids"]
        ['m1', 'm2']
    """

    text: str
    ids: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return _plain_fields(self)
