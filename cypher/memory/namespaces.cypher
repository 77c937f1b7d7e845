// name: memory/namespaces
// purpose: every namespace that holds memories
// parameters: none
// returns: namespace
// mode: read
MATCH (m:Memory)
RETURN DISTINCT m.namespace AS namespace
ORDER BY namespace
