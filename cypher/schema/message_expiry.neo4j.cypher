// name: schema/message_expiry
// dialect: neo4j
// purpose: range index on when a message expires: context/purge finds the expired ones
//          without scanning the label
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX message_expiry IF NOT EXISTS FOR (m:GraphmemMessage) ON (m.expires_at)
