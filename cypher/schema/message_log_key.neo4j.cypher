// name: schema/message_log_key
// dialect: neo4j
// purpose: one message log per (namespace, session): concurrent MERGEs of context/message_append
//          meet one node
// parameters: none
// returns: nothing
// mode: schema
CREATE CONSTRAINT message_log_key IF NOT EXISTS
FOR (ml:GraphmemMessageLog) REQUIRE (ml.namespace, ml.session) IS UNIQUE
