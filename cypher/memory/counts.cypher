// name: memory/counts
// purpose: memory counts by tier, status and kind in one namespace
// parameters: namespace (string)
// returns: tier, status, kind, n
// mode: read
MATCH (m:Memory {namespace: $namespace})
RETURN m.tier AS tier, m.status AS status, m.kind AS kind, count(m) AS n
