"""Storage: the port (``base.MemoryStore``) and its adapters."""

from graphmem.store.base import Counts, MemoryStore, WriteBatch

__all__ = ["Counts", "MemoryStore", "WriteBatch"]
