// name: schema/context_key
// dialect: falkordb
// purpose: range index to find a (:GraphmemContext) by its key; it also makes the label known
//          before the first one is written (FalkorDB runs one query at a time)
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (c:GraphmemContext) ON (c.namespace, c.session, c.key)
