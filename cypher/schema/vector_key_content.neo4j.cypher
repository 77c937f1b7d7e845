// name: schema/vector_key_content
// dialect: neo4j
// purpose: range index to find a memory's current (:ContentVector) node
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX content_vector_key IF NOT EXISTS
FOR (v:ContentVector) ON (v.namespace, v.id, v.hash)
