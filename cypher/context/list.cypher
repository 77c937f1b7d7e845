// name: context/list
// purpose: every key of a session's context that has not expired at now, by key
// parameters: namespace (string), session (string), now (float, POSIX seconds)
// returns: key (string), value (string: JSON), expires_at (float)
// mode: read
MATCH (c:GraphmemContext {namespace: $namespace, session: $session})
WHERE c.expires_at > $now
RETURN c.key AS key, c.value AS value, c.expires_at AS expires_at
ORDER BY key
