// name: schema/context_expiry
// dialect: falkordb
// purpose: range index on when a context entry expires: context/purge finds the expired ones
//          without scanning the label
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (c:GraphmemContext) ON (c.expires_at)
