// name: context/put
// purpose: set or replace one key of a session's short-term context (issue 48); the MERGE
//          is unique by the context_key constraint on Neo4j, FalkorDB runs one query at a time
// parameters: namespace (string), session (string), key (string), value (string: JSON),
//             expires_at (float, POSIX seconds)
// returns: key (string)
// mode: write
MERGE (c:GraphmemContext {namespace: $namespace, session: $session, key: $key})
SET c.value = $value, c.expires_at = $expires_at
RETURN c.key AS key
