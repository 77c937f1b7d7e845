// name: edge/neighbourhood
// purpose: the edges on paths of at most depth hops (both directions, bounded
//          variable-length pattern; depth is 1 or 2) from the seed memories, optionally of
//          some types only; the adapter caps the nodes reached breadth-first and falls back to
//          hop-by-hop expansion when limit cuts the result. startNode/endNode, not a second
//          MATCH on the bound r: FalkorDB answered that with every edge ~20 times over
// parameters: namespace (string), seeds (list of string), depth (int), types (list of
//             string | null), limit (int)
// returns: source_id, target_id, type, score, created_at (float), source
// mode: read
MATCH (s:Memory {namespace: $namespace})
WHERE s.id IN $seeds
MATCH p = (s)-[*1..2]-(:Memory)
WHERE length(p) <= $depth
  AND ($types IS NULL OR all(r IN relationships(p) WHERE type(r) IN $types))
UNWIND relationships(p) AS r
WITH DISTINCT r
RETURN startNode(r).id AS source_id, endNode(r).id AS target_id, type(r) AS type,
       r.score AS score, r.created_at AS created_at, r.source AS source
LIMIT $limit
