// name: memory/similarities
// dialect: falkordb
// purpose: cosine of a query vector to the current content and context vectors of the given
//          memories (the vector nodes their vec_hash / ctx_hash name), computed in the server:
//          retrieval's semantic terms without shipping 2 x 384 floats per candidate
// parameters: namespace (string), ids (list of string), vector (list of float, normalised)
// returns: id, content (float | null), context (float | null)
// mode: read
MATCH (m:Memory {namespace: $namespace})
WHERE m.id IN $ids
OPTIONAL MATCH (v:ContentVector {namespace: $namespace, id: m.id, hash: m.vec_hash})
OPTIONAL MATCH (c:ContextVector {namespace: $namespace, id: m.id, hash: m.ctx_hash})
WITH m, v, c, vecf32($vector) AS q
RETURN m.id AS id,
       CASE WHEN v IS NULL THEN null ELSE 1.0 - vec.cosineDistance(v.vector, q) END AS content,
       CASE WHEN c IS NULL THEN null ELSE 1.0 - vec.cosineDistance(c.vector, q) END AS context
