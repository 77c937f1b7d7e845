// name: schema/session_key
// dialect: neo4j
// purpose: one (:GraphmemSession) per (namespace, id): two writers' MERGEs of a new session's
//          node cannot make two (issue 45)
// parameters: none
// returns: nothing
// mode: schema
CREATE CONSTRAINT session_key IF NOT EXISTS
FOR (x:GraphmemSession) REQUIRE (x.namespace, x.id) IS UNIQUE
