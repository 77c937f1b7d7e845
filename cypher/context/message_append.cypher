// name: context/message_append
// purpose: append a message to a session's list and drop all but its newest cap, in one
//          statement: the session's (:GraphmemMessageLog) numbers the messages, and its
//          first SET takes the node's write lock before its number is read on Neo4j (two
//          appenders never share a number or leave more than cap); FalkorDB runs one
//          query at a time. The log lives as long as the session's last message
// parameters: namespace (string), session (string), message (string: JSON), cap (int),
//             added_at (float, POSIX seconds), expires_at (float, POSIX seconds)
// returns: dropped (int): older messages deleted
// mode: write
MERGE (ml:GraphmemMessageLog {namespace: $namespace, session: $session})
ON CREATE SET ml.last = 0, ml.expires_at = $expires_at
SET ml.held = true
SET ml.last = ml.last + 1,
    ml.expires_at = CASE WHEN ml.expires_at > $expires_at THEN ml.expires_at
                         ELSE $expires_at END
CREATE (:GraphmemMessage {namespace: $namespace, session: $session, seq: ml.last,
                          message: $message, added_at: $added_at, expires_at: $expires_at})
WITH ml.last AS last
MATCH (old:GraphmemMessage {namespace: $namespace, session: $session})
WHERE old.seq <= last - $cap
DELETE old
RETURN count(*) AS dropped
