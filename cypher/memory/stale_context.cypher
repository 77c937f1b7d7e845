// name: memory/stale_context
// purpose: how many (:ContextVector) nodes no memory points at any more (replaced or deleted):
//          what memory/vacuum_context would delete
// parameters: none
// returns: stale (int)
// mode: read
MATCH (v:ContextVector)
OPTIONAL MATCH (m:Memory {namespace: v.namespace, id: v.id})
WITH v, m
WHERE m IS NULL OR coalesce(m.ctx_hash, '') <> v.hash
RETURN count(v) AS stale
