// name: schema/key_lookup
// dialect: falkordb
// purpose: range index to find an API key record by its hash (every request) or id
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (k:GraphmemKey) ON (k.hash, k.id)
