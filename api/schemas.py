"""Request and response models of the REST API (they make the OpenAPI document)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Path
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from graphmem.config import WriteConfig
from graphmem.errors import ValidationError
from graphmem.rules import validation
from graphmem.rules.ttl import MAX_TTL_SECONDS

# The request schema states every constraint validation enforces (schemathesis checks that a
# schema-valid request is accepted). Patterns are full matches; no stored text holds a control
# character other than tab, newline and carriage return (graphmem.rules.validation).
_CTRL = "\\x00-\\x08\\x0b\\x0c\\x0e-\\x1f\\x7f"
NS_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$"
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"
TEXT_PATTERN = f"^[^{_CTRL}]*$"
CONTENT_PATTERN = f"^[^{_CTRL}]*[^{_CTRL}\\s][^{_CTRL}]*$"  # not only whitespace
# years 1 and 9999 with an offset can fall outside what UTC can represent
DATE_PATTERN = r"^(?!0001-|9999-)"

NamespaceStr = Annotated[str, Field(pattern=NS_PATTERN, examples=["agent-42"],
                                    description="the tenant: every call is scoped to one "
                                                "namespace")]
IdStr = Annotated[str, Field(pattern=ID_PATTERN)]
ShortText = Annotated[str, Field(max_length=256, pattern=TEXT_PATTERN)]
#: a topic, an agent or a tool: not empty, not only whitespace
Name = Annotated[str, Field(min_length=1, max_length=256, pattern=CONTENT_PATTERN)]
#: a conclusion or a position: the memory's content adds the topic and the agent to it
Statement = Annotated[str, Field(min_length=1, max_length=30_000, pattern=CONTENT_PATTERN)]
Content = Annotated[str, Field(min_length=1, max_length=32_000, pattern=CONTENT_PATTERN,
                               examples=["The deploy failed: the migration locked the users "
                                         "table"])]
def _integral(value: Any) -> Any:
    """JSON Schema counts 84.0 as an integer: so does this API (strict otherwise)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Limit = Annotated[int, Field(ge=1, le=100), BeforeValidator(_integral)]
Depth = Annotated[int, Field(ge=0, le=2), BeforeValidator(_integral)]
Unit = Annotated[float, Field(ge=0, le=1)]
Score = Annotated[float, Field(ge=-1, le=1)]
TierName = Literal["fast", "medium", "slow", "glacial"]
CallerRelation = Literal["CAUSES", "REFERENCES", "SIMILAR_TO", "CONTRADICTS"]
AnyRelation = Literal["CAUSES", "REFERENCES", "SIMILAR_TO", "CONTRADICTS", "SUMMARIZES",
                      "FOLLOWS"]
MetaValue = Annotated[str, Field(pattern=TEXT_PATTERN)] | int | float | bool | None
# the bound the core enforces (graphmem.rules.validation.metadata), at its defaults: keys
# (maxProperties), depth (flat: scalar values) and bytes (``x-max-bytes``: JSON Schema cannot
# count bytes, so this one rule is stated in the description and the extension only)
_WRITE = WriteConfig()
META_KEYS, META_BYTES = _WRITE.max_metadata_keys, _WRITE.max_metadata_bytes
Metadata = Annotated[dict[Annotated[str, Field(pattern=TEXT_PATTERN)], MetaValue],
                     Field(max_length=META_KEYS,
                           description=f"flat: string, number, boolean or null values; at most "
                                       f"{META_KEYS} keys and {META_BYTES:,} bytes as compact "
                                       "UTF-8 JSON (no spaces)",
                           json_schema_extra={"additionalProperties": False,
                                              "x-max-bytes": META_BYTES})]


def _iso_8601(value: Any) -> Any:
    """A date-time over REST is an ISO 8601 string (JSON has no date type), parsed as the
    Python API parses one; a number is not an epoch. A datetime passes: a model rebuilt from
    another's values (``MemoryItem(**create.model_dump())``)."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise ValueError(f"{value!r} is not a date-time: an ISO 8601 string such as "
                         "2026-01-01T12:00:00Z (a number is not read as an epoch)")
    try:
        return validation.timestamp(value)
    except ValidationError as exc:
        raise ValueError(str(exc)) from None


Timestamp = Annotated[datetime, BeforeValidator(_iso_8601),
                      Field(strict=False, description="ISO 8601 string; defaults to now",
                            json_schema_extra={"pattern": DATE_PATTERN})]
TYPE_PATTERN = r"^[a-z][a-z0-9_]{0,39}$"
TypeName = Annotated[str, Field(pattern=TYPE_PATTERN, examples=["decision"],
                                description="a memory type: observation, decision, pattern, "
                                            "reflexion, conflict, tool_usage, consensus, "
                                            "dissent, summary or your own word")]
AgentPath = Path(description="the agent (a memory's source)", max_length=256,
                 pattern=r"^[^\x00-\x1f\x7f/]+$")
#: the end of a validity period: after valid_from (a rule JSON Schema cannot state)
ValidUntil = Annotated[Timestamp | None, Field(description="must be after valid_from")]
#: a memory's own TTL in seconds (ADR 0067): graphmem.rules.ttl states the same bounds
MemoryTtl = Annotated[float, Field(
    gt=0, le=MAX_TTL_SECONDS, allow_inf_nan=False, examples=[3600],
    description="seconds the memory lives: then reads leave it out, it shows status "
                "expired and maintenance marks it so (restorable)")]


class _In(BaseModel):
    # strict: a boolean is a boolean and a number a number, as the schema says
    model_config = ConfigDict(extra="forbid", strict=True)


class RelationIn(_In):
    """A relation given with a memory at write time (``relations`` of ``MemoryItem``).

    Example:
        >>> RelationIn(type="CAUSES", target_id="m2").direction
        'out'
    """

    type: CallerRelation = Field(examples=["CAUSES"])
    target_id: IdStr = Field(description="another memory: never the memory itself")
    direction: Literal["out", "in"] = "out"
    score: Score | None = None


class MemoryItem(_In):
    """One memory of a batch write (``POST /v1/memories/batch``).

    Example:
        >>> MemoryItem(content="the deploy failed", importance=0.8).tier is None
        True
    """

    content: Content
    importance: Unit | None = Field(default=None, examples=[0.8],
                                    description="default: the type's (0.5 for observation)")
    tier: TierName | None = None
    relations: list[RelationIn] = Field(default=[], max_length=1000)
    metadata: Metadata | None = None
    session_id: ShortText | None = None
    created_at: Timestamp | None = None
    source: ShortText | None = None
    topic: ShortText | None = None
    pinned: bool = False
    id: IdStr | None = None
    type: TypeName | None = None
    valid_from: Timestamp | None = None
    valid_until: ValidUntil = None
    ttl: MemoryTtl | None = None


class MemoryCreate(MemoryItem):
    """``POST /v1/memories``: one memory and its namespace.

    Example:
        >>> MemoryCreate(namespace="ops", content="the deploy failed").importance is None
        True
        >>> MemoryCreate(namespace="ops", content="")  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        pydantic_core._pydantic_core.ValidationError: ...
    """

    namespace: NamespaceStr


class BatchCreate(_In):
    """``POST /v1/memories/batch``: up to 1000 memories, written all or none.

    Example:
        >>> len(BatchCreate(namespace="ops", items=[{"content": "a"}, {"content": "b"}]).items)
        2
    """

    namespace: NamespaceStr
    items: list[MemoryItem] = Field(min_length=1, max_length=1000,
                                    description="written atomically: all or nothing")


class MemoryPatch(_In):
    """``PATCH /v1/memories/{id}``: only the fields given change.

    Example:
        >>> MemoryPatch(importance=0.9).model_dump(exclude_unset=True)
        {'importance': 0.9}
    """

    content: Content | None = None
    importance: Unit | None = None
    tier: TierName | None = None
    metadata: Metadata | None = None
    source: ShortText | None = None
    topic: ShortText | None = None
    type: TypeName | None = None
    valid_from: Timestamp | None = None
    valid_until: ValidUntil = None
    ttl: MemoryTtl | None = Field(default=None, description="the memory expires this many "
                                  "seconds from now (its TTL refreshed)")


class FeedbackIn(_In):
    """``POST /v1/memories/{id}/feedback``: how a retrieved memory served (at least one of
    ``useful`` / ``outcome``).

    Example:
        >>> FeedbackIn(useful=True, outcome="success").outcome
        'success'
    """

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={
        "anyOf": [{"required": ["useful"], "properties": {"useful": {"type": "boolean"}}},
                  {"required": ["outcome"],
                   "properties": {"outcome": {"enum": ["success", "failure"]}}}]})

    useful: bool | None = None
    outcome: Literal["success", "failure"] | None = None
    predicted_relevance: Unit | None = None
    agent: Annotated[ShortText | None, Field(
        description="who gave it: distinct agents within a window promote a shared memory")
    ] = None


class RelationCreate(_In):
    """``POST /v1/relations``: an explicit typed edge.

    Example:
        >>> RelationCreate(namespace="ops", source_id="m1", target_id="m2", type="CAUSES").type
        'CAUSES'
    """

    namespace: NamespaceStr
    source_id: IdStr
    target_id: IdStr = Field(description="another memory than source_id")
    type: CallerRelation = Field(examples=["CAUSES"])
    score: Score | None = None


class RelationDelete(_In):
    """``DELETE /v1/relations``: one edge by its key.

    Example:
        >>> RelationDelete(namespace="ops", source_id="m1", target_id="m2", type="REFERENCES").type
        'REFERENCES'
    """

    namespace: NamespaceStr
    source_id: IdStr
    target_id: IdStr
    type: AnyRelation


class Filters(_In):
    """Equality filters of a search (every one given must hold).

    Example:
        >>> Filters(session_id="s1", metadata={"team": "infra"}).kind is None
        True
    """

    source: ShortText | None = None
    session_id: ShortText | None = None
    topic: ShortText | None = None
    kind: Literal["memory", "summary"] | None = None
    metadata: Metadata | None = None
    type: TypeName | Annotated[list[TypeName], Field(min_length=1, max_length=20)] | None = None
    since: Timestamp | None = Field(default=None, description="event time at or after")
    until: Timestamp | None = Field(default=None, description="event time before")


class SearchIn(_In):
    """``POST /v1/search`` and ``/v1/search/index``: a query and its options.

    Example:
        >>> q = SearchIn(namespace="ops", query="why did the deploy fail?", depth=2)
        >>> q.limit, q.explain
        (10, True)
    """

    namespace: NamespaceStr
    query: Content = Field(examples=["why did the deploy fail?"])
    limit: Limit = 10
    tiers: Annotated[list[TierName], Field(min_length=1)] | None = None
    min_similarity: Score | None = None
    strategy: Literal["weighted", "fast_first", "comprehensive"] | None = None
    depth: Depth | None = None
    filters: Filters | None = None
    explain: bool = Field(default=True, description="include score terms and paths")
    include_archived: bool | None = Field(
        default=None, description="archived memories, reached through the summaries that "
        "stand for them: by default they rank below active ones; true ranks them as if "
        "active (the default of strategy comprehensive); false shows active memories only")
    as_of: Timestamp | None = Field(default=None, description="only what was known and valid "
                                                              "then (validity)")
    now: Timestamp | None = Field(
        default=None, description="the reference time of a time the query names relative to "
        "now (\"last week\", \"yesterday\"); defaults to the server's clock")
    record_access: bool = Field(
        default=True, description="count the results as accessed (agents); false for a "
        "read-only look that changes nothing")


class EntriesIn(_In):
    """``POST /v1/entries``: full records of up to 100 ids.

    Example:
        >>> EntriesIn(namespace="ops", ids=["m1", "m2"]).ids
        ['m1', 'm2']
    """

    namespace: NamespaceStr
    ids: list[IdStr] = Field(min_length=1, max_length=100)
    record_access: bool = Field(
        default=True, description="count the read as an access (agents); operators' tools "
        "such as the viewer pass false and change nothing")
    agent: Annotated[ShortText | None, Field(
        description="who read them: distinct agents within a window promote a shared memory")
    ] = None


class MemoryOut(BaseModel):
    """A memory as the API returns it (times as ISO 8601 strings, no vectors).

    Example:
        >>> from graphmem.models import Memory
        >>> out = MemoryOut.model_validate(Memory(id="m1", namespace="ops", content="x").to_dict())
        >>> out.tier, out.status
        ('medium', 'active')
    """

    id: str
    namespace: str
    content: str
    kind: str
    tier: str
    base_importance: float
    importance: float
    pinned: bool
    created_at: str
    updated_at: str
    last_accessed_at: str
    access_count: int
    surprise_score: float
    success_count: int
    failure_count: int
    last_promoted_at: str | None
    source: str | None
    topic: str | None
    session_id: str | None
    metadata: dict[str, Any]
    status: str
    content_hash: str
    window_start: str | None = None
    window_count: int = 0
    last_predicted: float | None = None
    stored_at: str | None = None
    reinforced_at: str | None = None
    type: str = "observation"
    valid_from: str | None = None
    valid_until: str | None = None
    superseded_by: str | None = None
    used_by: dict[str, float] = Field(
        default={}, description="agents that used it within the promotion window -> when "
        "last (epoch seconds)")
    mentioned: list[dict[str, str]] = Field(
        default=[], description="times the content mentions, relative ones resolved against "
        "created_at: [{start, end}] (ISO 8601, end exclusive)")
    expires_at: str | None = Field(
        default=None, description="when its own TTL runs out (ISO 8601); null: never")


class RelationOut(BaseModel):
    """An edge as the API returns it.

    Example:
        >>> from graphmem.models import Relation, RelationType
        >>> edge = Relation("m1", "m2", RelationType.CAUSES, "ops")
        >>> RelationOut.model_validate(edge.to_dict()).type
        'CAUSES'
    """

    source_id: str
    target_id: str
    type: str
    namespace: str
    score: float | None
    created_at: str
    source: str


class ResultOut(BaseModel):
    """One retrieval result: the memory, its score, and (with ``explain``) its terms and path.

    Example:
        >>> from graphmem.models import Memory, RetrievalResult, WalkPath
        >>> m = Memory(id="m1", namespace="ops", content="x")
        >>> hit = RetrievalResult(m, 0.4, {}, WalkPath(("m1",)))
        >>> ResultOut.model_validate(hit.to_dict()).disputed
        False
    """

    memory: MemoryOut
    score: float
    terms: dict[str, float] | None = None
    reasons: dict[str, str] | None = Field(
        default=None, description="with explain: a term's reason in words "
        "(time: \"inside July 2023\")")
    path: dict[str, Any] | None = None
    disputed: bool
    disputed_by: list[str]


class IndexEntryOut(BaseModel):
    """One compact preview of ``/v1/search/index``.

    Example:
        >>> from graphmem.models import IndexEntry, Tier, utcnow
        >>> e = IndexEntry("m1", "the deploy failed", Tier.FAST, 0.42, 5, utcnow(), None, False)
        >>> IndexEntryOut.model_validate(e.to_dict()).token_estimate
        5
    """

    id: str
    preview: str
    tier: str
    score: float
    token_estimate: int
    created_at: str
    session_id: str | None
    disputed: bool


class ErrorOut(BaseModel):
    """Every 4xx/5xx body: ``{"error": {"code", "message"}}``.

    Example:
        >>> ErrorOut(error={"code": "not_found", "message": "no memory 'm1'"}).error["code"]
        'not_found'
    """

    error: dict[str, str] = Field(examples=[{"code": "invalid_content",
                                             "message": "content is empty"}])


class RunIn(_In):
    """``POST /v1/consolidation/runs``: one namespace or all, applied or dry.

    Example:
        >>> RunIn(dry_run=True).namespace is None
        True
    """

    namespace: NamespaceStr | None = Field(default=None,
                                           description="one namespace, or null for all")
    dry_run: bool = Field(default=False, description="compute the report, write nothing")



class MemoryPageOut(BaseModel):
    """A page of a listing and the cursor of the next one (null on the last page).

    Example:
        >>> MemoryPageOut(items=[], next_cursor=None).next_cursor is None
        True
    """

    items: list[MemoryOut]
    next_cursor: str | None


class HistoryEntryOut(BaseModel):
    """One step of a memory's history.

    Example:
        >>> HistoryEntryOut(event="created", at="2026-01-01T00:00:00+00:00",
        ...                 reason="stored").content is None
        True
    """

    event: str
    at: str
    reason: str
    content: str | None = None
    from_tier: str | None = None
    to_tier: str | None = None
    from_status: str | None = None
    to_status: str | None = None


class DeletedOut(BaseModel):
    """How many memories a delete removed.

    Example:
        >>> DeletedOut(deleted=3).deleted
        3
    """

    deleted: int


class SupersedeIn(_In):
    """``POST /v1/memories/{id}/supersede``: the memory that replaces this one.

    Example:
        >>> SupersedeIn(by="m2").reason is None
        True
    """

    by: Annotated[IdStr, Field(description="another memory's id (not the superseded one)")]
    reason: ShortText | None = None


class ConsensusIn(_In):
    """``POST /v1/consensus``: a debate's outcome.

    Example:
        >>> ConsensusIn(namespace="d", topic="db", conclusion="postgres").confidence
        0.8
    """

    namespace: NamespaceStr
    topic: Name
    conclusion: Statement
    participants: list[ShortText] = Field(default=[], max_length=100)
    confidence: Unit = 0.8
    evidence_ids: list[IdStr] = Field(default=[], max_length=1000)
    session_id: ShortText | None = None


class DissentIn(_In):
    """``POST /v1/dissent``: an agent's dissenting position, against a consensus.

    Example:
        >>> DissentIn(namespace="d", topic="db", agent="gemini", position="mongo").against
    """

    namespace: NamespaceStr
    topic: Name
    agent: Name
    position: Statement
    against: IdStr | None = None


class TopicIn(_In):
    """``POST /v1/consensus/similar`` and ``/v1/dissent/similar``: a topic to match by meaning.

    Example:
        >>> TopicIn(namespace="d", topic="which database").limit
        5
    """

    namespace: NamespaceStr
    topic: Name
    limit: Limit = 5


class ConsensusOut(BaseModel):
    """A past consensus, how well it matches, and the dissent against it.

    Example:
        >>> ConsensusOut.model_fields["dissent"].annotation
        list[graphmem.api.schemas.MemoryOut]
    """

    consensus: MemoryOut
    score: float
    dissent: list[MemoryOut]


class SummarizeIn(_In):
    """``POST /v1/summaries``: an agent's or a session's memories in a time range.

    Example:
        >>> SummarizeIn(namespace="ci", agent="ci-bot").limit
        500
    """

    # one of the two is required (stated in the schema, so generated requests know it)
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"anyOf": [
        {"required": ["agent"], "properties": {"agent": {"type": "string"}}},
        {"required": ["session_id"], "properties": {"session_id": {"type": "string"}}}]})

    namespace: NamespaceStr
    agent: ShortText | None = None
    session_id: ShortText | None = None
    since: Timestamp | None = None
    until: Timestamp | None = None
    limit: Annotated[int, Field(ge=1, le=5000), BeforeValidator(_integral)] = 500


class SummaryOut(BaseModel):
    """An extractive summary and the ids it stands for.

    Example:
        >>> SummaryOut(text="", ids=[]).ids
        []
    """

    text: str
    ids: list[str]


class CaptureIn(_In):
    """``POST /v1/tools/capture``: one tool call of an agent.

    Example:
        >>> CaptureIn(namespace="dev", agent="coder", tool="Bash", input="ls", output="",
        ...           ok=True).session_id is None
        True
    """

    namespace: NamespaceStr
    agent: Name
    tool: Name
    input: Annotated[str, Field(max_length=100_000, pattern=TEXT_PATTERN)]
    output: Annotated[str, Field(max_length=100_000, pattern=TEXT_PATTERN)]
    ok: bool
    session_id: ShortText | None = None


class CaptureOut(BaseModel):
    """Whether the event was kept (false: skipped by the lists or over the cap, counted).

    Example:
        >>> CaptureOut(captured=False, memory=None).captured
        False
    """

    captured: bool
    memory: MemoryOut | None
