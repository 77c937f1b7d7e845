// name: memory/session_members
// purpose: a session's memories in session order (time, then insertion)
// parameters: namespace (string), session_id (string)
// returns: id, created_at (float)
// mode: read
MATCH (m:Memory {namespace: $namespace, session_id: $session_id})
RETURN m.id AS id, m.created_at AS created_at
ORDER BY m.created_at, m.seq
