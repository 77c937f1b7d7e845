// name: schema/session_key
// dialect: falkordb
// purpose: the lookup of a session's version node (FalkorDB runs one write at a time, so a
//          MERGE cannot make two; issue 45)
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (x:GraphmemSession) ON (x.namespace, x.id)
