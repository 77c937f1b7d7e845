"""Request and response models of the REST API (they make the OpenAPI document)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Namespace = Field(description="the tenant: every call is scoped to one namespace",
                  examples=["agent-42"])


class _In(BaseModel):
    # strict: a boolean is a boolean and a number a number, as the schema says
    model_config = ConfigDict(extra="forbid", strict=True)


class RelationIn(_In):
    type: str = Field(examples=["CAUSES"], description="CAUSES | REFERENCES | SIMILAR_TO | "
                      "CONTRADICTS")
    target_id: str
    direction: Literal["out", "in"] = "out"
    score: float | None = None


class MemoryItem(_In):
    content: str = Field(examples=["The deploy failed: the migration locked the users table"])
    importance: float = Field(default=0.5, examples=[0.8])
    tier: str | None = None
    relations: list[RelationIn] = []
    metadata: dict[str, Any] | None = None
    session_id: str | None = None
    created_at: datetime | None = Field(default=None, strict=False,
                                        description="ISO 8601; defaults to now")
    source: str | None = None
    topic: str | None = None
    pinned: bool = False
    id: str | None = None


class MemoryCreate(MemoryItem):
    namespace: str = Namespace


class BatchCreate(_In):
    namespace: str = Namespace
    items: list[MemoryItem] = Field(description="written atomically: all or nothing")


class MemoryPatch(_In):
    content: str | None = None
    importance: float | None = None
    tier: str | None = None
    metadata: dict[str, Any] | None = None
    source: str | None = None
    topic: str | None = None


class FeedbackIn(_In):
    useful: bool | None = None
    outcome: Literal["success", "failure"] | None = None
    predicted_relevance: float | None = None


class RelationCreate(_In):
    namespace: str = Namespace
    source_id: str
    target_id: str
    type: str = Field(examples=["CAUSES"])
    score: float | None = None


class RelationDelete(_In):
    namespace: str = Namespace
    source_id: str
    target_id: str
    type: str


class SearchIn(_In):
    namespace: str = Namespace
    query: str = Field(examples=["why did the deploy fail?"])
    limit: int = 10
    tiers: list[str] | None = None
    min_similarity: float | None = None
    strategy: Literal["weighted", "fast_first", "comprehensive"] | None = None
    depth: int | None = None
    filters: dict[str, Any] | None = None
    explain: bool = Field(default=True, description="include score terms and paths")
    include_archived: bool | None = Field(
        default=None, description="also reach archived memories through the summaries that "
        "stand for them (default: only with strategy comprehensive)")
    record_access: bool = Field(
        default=True, description="count the results as accessed (agents); false for a "
        "read-only look that changes nothing")


class EntriesIn(_In):
    namespace: str = Namespace
    ids: list[str]


class MemoryOut(BaseModel):
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


class RelationOut(BaseModel):
    source_id: str
    target_id: str
    type: str
    namespace: str
    score: float | None
    created_at: str
    source: str


class ResultOut(BaseModel):
    memory: MemoryOut
    score: float
    terms: dict[str, float] | None = None
    path: dict[str, Any] | None = None
    disputed: bool
    disputed_by: list[str]


class IndexEntryOut(BaseModel):
    id: str
    preview: str
    tier: str
    score: float
    token_estimate: int
    created_at: str
    session_id: str | None
    disputed: bool


class ErrorOut(BaseModel):
    error: dict[str, str] = Field(examples=[{"code": "invalid_content",
                                             "message": "content is empty"}])


class RunIn(_In):
    namespace: str | None = Field(default=None, description="one namespace, or null for all")
    dry_run: bool = Field(default=False, description="compute the report, write nothing")
