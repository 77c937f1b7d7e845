// name: schema/vector_key_context
// dialect: neo4j
// purpose: range index to find a memory's current (:ContextVector) node
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX context_vector_key IF NOT EXISTS
FOR (v:ContextVector) ON (v.namespace, v.id, v.hash)
