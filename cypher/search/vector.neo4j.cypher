// name: search/vector
// dialect: neo4j
// purpose: approximate nearest memories to a vector. The index is global and its vector nodes
//          append-only, so hits are joined to their memory (same namespace, current hash,
//          wanted statuses / tiers); the adapter widens the fetch while the index returned all
//          it was asked for but too few survived. Neo4j's cosine score is (1 + cos) / 2: similarity = 2 * score - 1.
// parameters: index (string: 'content_vector' | 'context_vector', from an allow-list), fetch (int), vector (list of float), namespace (string),
//             statuses (list of string), tiers (list of string | null)
// returns: fetched (int): hits the index returned; matches (list of {id, similarity})
// mode: read
CALL db.index.vector.queryNodes($index, $fetch, $vector) YIELD node, score
WITH collect({v: node, score: score}) AS hits
WITH size(hits) AS fetched, hits
UNWIND (CASE WHEN fetched = 0 THEN [null] ELSE hits END) AS h
OPTIONAL MATCH (m:Memory {namespace: $namespace, id: h.v.id})
WHERE h.v.namespace = $namespace AND (m.vec_hash = h.v.hash OR m.ctx_hash = h.v.hash)
RETURN fetched,
       collect(CASE WHEN m IS NOT NULL AND m.status IN $statuses
                         AND ($tiers IS NULL OR m.tier IN $tiers)
                    THEN {id: m.id, similarity: 2.0 * h.score - 1.0} END) AS matches
