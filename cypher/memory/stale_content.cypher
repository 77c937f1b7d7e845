// name: memory/stale_content
// purpose: how many (:ContentVector) nodes no memory points at any more (replaced or deleted):
//          what memory/vacuum_content would delete
// parameters: none
// returns: stale (int)
// mode: read
MATCH (v:ContentVector)
OPTIONAL MATCH (m:Memory {namespace: v.namespace, id: v.id})
WITH v, m
WHERE m IS NULL OR coalesce(m.vec_hash, '') <> v.hash
RETURN count(v) AS stale
