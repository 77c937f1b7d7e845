// name: memory/similarities
// dialect: neo4j
// purpose: cosine of a query vector to the current content and context vectors of the given
//          memories (the vector nodes their vec_hash / ctx_hash name), computed in the server:
//          retrieval's semantic terms without shipping 2 x 384 floats per candidate.
//          vector.similarity.cosine answers (1 + cos) / 2: the statement returns cos itself
// parameters: namespace (string), ids (list of string), vector (list of float, normalised)
// returns: id, content (float | null), context (float | null)
// mode: read
MATCH (m:Memory {namespace: $namespace})
WHERE m.id IN $ids
OPTIONAL MATCH (v:ContentVector {namespace: $namespace, id: m.id, hash: m.vec_hash})
OPTIONAL MATCH (c:ContextVector {namespace: $namespace, id: m.id, hash: m.ctx_hash})
RETURN m.id AS id,
       CASE WHEN v IS NULL THEN null
            ELSE 2.0 * vector.similarity.cosine(v.vector, $vector) - 1.0 END AS content,
       CASE WHEN c IS NULL THEN null
            ELSE 2.0 * vector.similarity.cosine(c.vector, $vector) - 1.0 END AS context
