// name: schema/context_key
// dialect: neo4j
// purpose: one context entry per (namespace, session, key): concurrent MERGEs of context/put
//          meet one node
// parameters: none
// returns: nothing
// mode: schema
CREATE CONSTRAINT context_key IF NOT EXISTS
FOR (c:GraphmemContext) REQUIRE (c.namespace, c.session, c.key) IS UNIQUE
