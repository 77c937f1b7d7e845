// name: context/messages_clear
// purpose: delete every message of a session (its log keeps numbering)
// parameters: namespace (string), session (string)
// returns: deleted (int)
// mode: write
MATCH (m:GraphmemMessage {namespace: $namespace, session: $session})
DELETE m
RETURN count(*) AS deleted
