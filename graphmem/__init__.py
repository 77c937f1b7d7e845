"""graphmem: long-term memory for LLM agents, backed by a property graph."""

from graphmem.config import GraphMemConfig
from graphmem.errors import GraphMemError
from graphmem.memory import GraphMemory
from graphmem.models import (
    IndexEntry,
    Memory,
    MemoryInput,
    Relation,
    RelationSpec,
    RelationType,
    RetrievalResult,
    Status,
    Tier,
)

__all__ = [
    "GraphMemConfig",
    "GraphMemError",
    "GraphMemory",
    "IndexEntry",
    "Memory",
    "MemoryInput",
    "Relation",
    "RelationSpec",
    "RelationType",
    "RetrievalResult",
    "Status",
    "Tier",
]
__version__ = "0.1.0"
