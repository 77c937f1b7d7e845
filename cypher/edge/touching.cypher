// name: edge/touching
// purpose: the edges into and out of the given memories, optionally of some types only, in
//          one round trip (an edge between two of them comes twice; the adapter keys them).
//          startNode/endNode keep the direction of the undirected match
// parameters: namespace (string), ids (list of string), types (list of string | null)
// returns: source_id, target_id, type, score, created_at (float), source
// mode: read
MATCH (a:Memory {namespace: $namespace})-[r]-(:Memory)
WHERE a.id IN $ids AND ($types IS NULL OR type(r) IN $types)
RETURN startNode(r).id AS source_id, endNode(r).id AS target_id, type(r) AS type,
       r.score AS score, r.created_at AS created_at, r.source AS source
