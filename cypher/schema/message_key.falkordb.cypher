// name: schema/message_key
// dialect: falkordb
// purpose: range index to find a (:GraphmemMessage) by its key; it also makes the label known
//          before the first one is written (FalkorDB runs one query at a time)
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (m:GraphmemMessage) ON (m.namespace, m.session, m.seq)
