// name: memory/anchor
// purpose: the time and insertion order of one memory (for timelines)
// parameters: namespace (string), id (string)
// returns: created_at (float), seq (int)
// mode: read
MATCH (m:Memory {namespace: $namespace, id: $id})
RETURN m.created_at AS created_at, m.seq AS seq
