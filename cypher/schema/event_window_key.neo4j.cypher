// name: schema/event_window_key
// dialect: neo4j
// purpose: one event window per (namespace, key): concurrent MERGEs of counter/count_event
//          meet one node instead of creating two
// parameters: none
// returns: nothing
// mode: schema
CREATE CONSTRAINT event_window_key IF NOT EXISTS
FOR (w:GraphmemWindow) REQUIRE (w.namespace, w.key) IS UNIQUE
