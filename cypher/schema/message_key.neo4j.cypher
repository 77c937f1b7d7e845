// name: schema/message_key
// dialect: neo4j
// purpose: one message per (namespace, session, seq)
// parameters: none
// returns: nothing
// mode: schema
CREATE CONSTRAINT message_key IF NOT EXISTS
FOR (m:GraphmemMessage) REQUIRE (m.namespace, m.session, m.seq) IS UNIQUE
