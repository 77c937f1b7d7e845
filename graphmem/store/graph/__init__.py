"""The Cypher adapter over Neo4j or FalkorDB; statements live in ``graphmem.cypher`` (ADR 0003)."""
