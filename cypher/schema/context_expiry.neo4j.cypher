// name: schema/context_expiry
// dialect: neo4j
// purpose: range index on when a context entry expires: context/purge finds the expired ones
//          without scanning the label
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX context_expiry IF NOT EXISTS FOR (c:GraphmemContext) ON (c.expires_at)
