// name: schema/vector_key_context
// dialect: falkordb
// purpose: range index to find a memory's current (:ContextVector) node
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (v:ContextVector) ON (v.namespace, v.id, v.hash)
