// name: edge/counts
// purpose: edge counts by type in one namespace
// parameters: namespace (string)
// returns: type, n
// mode: read
MATCH (a:Memory {namespace: $namespace})-[r]->(:Memory)
RETURN type(r) AS type, count(r) AS n
