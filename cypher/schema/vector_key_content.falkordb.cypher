// name: schema/vector_key_content
// dialect: falkordb
// purpose: range index to find a memory's current (:ContentVector) node
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (v:ContentVector) ON (v.namespace, v.id, v.hash)
