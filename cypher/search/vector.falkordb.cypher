// name: search/vector
// dialect: falkordb
// purpose: approximate nearest memories to a vector, then scoped to a namespace, statuses
//          and tiers (the index is global: the adapter over-fetches and widens when short).
//          FalkorDB's score is a cosine *distance*: similarity = 1 - score.
// parameters: attribute (string: 'embedding' | 'context_embedding', from an allow-list),
//             fetch (int), vector (list of float), namespace (string),
//             statuses (list of string), tiers (list of string | null), k (int)
// returns: id, similarity (float), fetched (int)
// mode: read
CALL db.idx.vector.queryNodes('Memory', $attribute, $fetch, vecf32($vector)) YIELD node, score
WITH collect({node: node, score: score}) AS hits
UNWIND hits AS h
WITH h.node AS node, h.score AS score, size(hits) AS fetched
WHERE node.namespace = $namespace AND node.status IN $statuses
  AND ($tiers IS NULL OR node.tier IN $tiers)
RETURN node.id AS id, 1.0 - score AS similarity, fetched
ORDER BY similarity DESC
LIMIT $k
