// name: context/get
// purpose: one key of a session's context unless it expired at now
// parameters: namespace (string), session (string), key (string),
//             now (float, POSIX seconds)
// returns: value (string: JSON), expires_at (float); no row when missing or expired
// mode: read
MATCH (c:GraphmemContext {namespace: $namespace, session: $session, key: $key})
WHERE c.expires_at > $now
RETURN c.value AS value, c.expires_at AS expires_at
