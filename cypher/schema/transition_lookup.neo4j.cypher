// name: schema/transition_lookup
// dialect: neo4j
// purpose: range index for a namespace's transitions log and one memory's history
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX transition_lookup IF NOT EXISTS
FOR (t:GraphmemTransition) ON (t.namespace, t.memory_id)
