// name: schema/message_log_expiry
// dialect: falkordb
// purpose: range index on when a message log expires: context/purge finds the expired ones
//          without scanning the label
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (ml:GraphmemMessageLog) ON (ml.expires_at)
