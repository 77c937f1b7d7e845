// name: search/vector
// dialect: neo4j
// purpose: approximate nearest memories to a vector, then scoped to a namespace, statuses
//          and tiers (the index is global: the adapter over-fetches and widens when short).
//          Neo4j's cosine score is (1 + cos) / 2: similarity = 2 * score - 1.
// parameters: index (string: 'memory_embedding' | 'memory_context_embedding', from an
//             allow-list), fetch (int), vector (list of float), namespace (string),
//             statuses (list of string), tiers (list of string | null), k (int)
// returns: id, similarity (float), fetched (int)
// mode: read
CALL db.index.vector.queryNodes($index, $fetch, $vector) YIELD node, score
WITH collect({node: node, score: score}) AS hits
UNWIND hits AS h
WITH h.node AS node, h.score AS score, size(hits) AS fetched
WHERE node.namespace = $namespace AND node.status IN $statuses
  AND ($tiers IS NULL OR node.tier IN $tiers)
RETURN node.id AS id, 2.0 * score - 1.0 AS similarity, fetched
ORDER BY similarity DESC
LIMIT $k
