// name: memory/vacuum_context
// purpose: delete (:ContextVector) nodes no memory points at any more (replaced or deleted);
//          the adapter then rebuilds the vector index, since deletes degrade FalkorDB 4.16's
//          HNSW graph (ADR 0003)
// parameters: none
// returns: deleted (int)
// mode: write
MATCH (v:ContextVector)
OPTIONAL MATCH (m:Memory {namespace: v.namespace, id: v.id})
WITH v, m
WHERE m IS NULL OR coalesce(m.ctx_hash, '') <> v.hash
DELETE v
RETURN count(v) AS deleted
