// name: schema/memory_dedupe
// dialect: neo4j
// purpose: an active memory created with dedupe on is unique by its content hash
//          (dedupe_key: absent on the others, which the constraint ignores): two processes
//          writing the same content at once cannot both create it (issue 45)
// parameters: none
// returns: nothing
// mode: schema
CREATE CONSTRAINT memory_dedupe IF NOT EXISTS
FOR (m:Memory) REQUIRE (m.namespace, m.dedupe_key) IS UNIQUE
