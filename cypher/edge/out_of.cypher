// name: edge/out_of
// purpose: outgoing edges of the given memories, optionally of some types only
// parameters: namespace (string), ids (list of string), types (list of string | null)
// returns: source_id, target_id, type, score, created_at (float), source
// mode: read
MATCH (a:Memory {namespace: $namespace})-[r]->(b:Memory)
WHERE a.id IN $ids AND ($types IS NULL OR type(r) IN $types)
RETURN a.id AS source_id, b.id AS target_id, type(r) AS type, r.score AS score,
       r.created_at AS created_at, r.source AS source
