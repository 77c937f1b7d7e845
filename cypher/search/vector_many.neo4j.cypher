// name: search/vector_many
// dialect: neo4j
// purpose: search/vector for several vectors in one round trip (the SIMILAR_TO links of a
//          write batch): one row per vector, in order. The adapter widens the fetch, one
//          vector at a time through search/vector, where too few hits survived the join.
// parameters: index (string: 'content_vector' | 'context_vector', from an allow-list), fetch (int), vectors (list of list of float),
//             namespace (string), statuses (list of string)
// returns: i (int): the vector's position; fetched (int); matches (list of {id, similarity})
// mode: read
UNWIND range(0, size($vectors) - 1) AS i
CALL (i) {
  CALL db.index.vector.queryNodes($index, $fetch, $vectors[i]) YIELD node, score
  WITH collect({v: node, score: score}) AS hits
  WITH size(hits) AS fetched, hits
  UNWIND (CASE WHEN fetched = 0 THEN [null] ELSE hits END) AS h
  OPTIONAL MATCH (m:Memory {namespace: $namespace, id: h.v.id})
  WHERE h.v.namespace = $namespace AND (m.vec_hash = h.v.hash OR m.ctx_hash = h.v.hash)
  RETURN fetched,
         collect(CASE WHEN m IS NOT NULL AND m.status IN $statuses
                      THEN {id: m.id, similarity: 2.0 * h.score - 1.0} END) AS matches
}
RETURN i, fetched, matches
