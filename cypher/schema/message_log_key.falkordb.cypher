// name: schema/message_log_key
// dialect: falkordb
// purpose: range index to find a (:GraphmemMessageLog) by its key; it also makes the label
//          known
//          before the first one is written (FalkorDB runs one query at a time)
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (ml:GraphmemMessageLog) ON (ml.namespace, ml.session)
