// name: context/delete_key
// purpose: delete one key of a session's context
// parameters: namespace (string), session (string), key (string)
// returns: deleted (int)
// mode: write
MATCH (c:GraphmemContext {namespace: $namespace, session: $session, key: $key})
DELETE c
RETURN count(*) AS deleted
