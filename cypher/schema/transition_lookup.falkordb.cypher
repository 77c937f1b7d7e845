// name: schema/transition_lookup
// dialect: falkordb
// purpose: range index for a namespace's transitions log and one memory's history
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (t:GraphmemTransition) ON (t.namespace, t.memory_id, t.at)
