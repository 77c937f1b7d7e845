// name: edge/page
// purpose: a page of a namespace's edges, ordered by (source seq, target id, type) (export)
// parameters: namespace (string), skip (int), page (int)
// returns: source_id, target_id, type, score, created_at (float), source
// mode: read
MATCH (a:Memory {namespace: $namespace})-[r]->(b:Memory)
RETURN a.id AS source_id, b.id AS target_id, type(r) AS type, r.score AS score,
       r.created_at AS created_at, r.source AS source
ORDER BY a.seq, b.id, type
SKIP $skip
LIMIT $page
