// name: memory/session_version
// purpose: how many batches have changed a session's FOLLOWS chain (0 for none): a writer
//          reads it before the session's members and the write refuses the batch when it
//          changed meanwhile (issue 45)
// parameters: namespace (string), session_id (string)
// returns: version
// mode: read
OPTIONAL MATCH (x:GraphmemSession {namespace: $namespace, id: $session_id})
RETURN coalesce(x.version, 0) AS version
