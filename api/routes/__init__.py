"""One router per resource: memories, relations, retrieval, consolidation, operations."""
