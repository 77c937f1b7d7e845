// name: context/delete_session
// purpose: delete every key of a session's context
// parameters: namespace (string), session (string)
// returns: deleted (int)
// mode: write
MATCH (c:GraphmemContext {namespace: $namespace, session: $session})
DELETE c
RETURN count(*) AS deleted
