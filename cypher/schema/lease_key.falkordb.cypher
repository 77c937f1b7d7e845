// name: schema/lease_key
// dialect: falkordb
// purpose: range index to find a lease by name; it also makes the label known before the
//          first lease is taken (on a graph that has never seen the label, concurrent MERGEs
//          of lease/acquire each created a lease and both held it)
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (l:GraphmemLease) ON (l.name)
