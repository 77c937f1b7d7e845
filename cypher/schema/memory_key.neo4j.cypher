// name: schema/memory_key
// dialect: neo4j
// purpose: a memory is unique by (namespace, id)
// parameters: none
// returns: nothing
// mode: schema
CREATE CONSTRAINT memory_key IF NOT EXISTS
FOR (m:Memory) REQUIRE (m.namespace, m.id) IS UNIQUE
