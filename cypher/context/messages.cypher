// name: context/messages
// purpose: a session's newest unexpired messages, oldest first
// parameters: namespace (string), session (string), now (float, POSIX seconds),
//             limit (int)
// returns: message (string: JSON), added_at (float), expires_at (float), seq (int)
// mode: read
MATCH (m:GraphmemMessage {namespace: $namespace, session: $session})
WHERE m.expires_at > $now
WITH m ORDER BY m.seq DESC LIMIT $limit
RETURN m.message AS message, m.added_at AS added_at, m.expires_at AS expires_at,
       m.seq AS seq
ORDER BY seq
