// name: memory/transitions_recent
// purpose: a namespace's latest tier transitions at or after a time, newest first (the viewer's
//          tier dashboard and `stats`)
// parameters: namespace (string), since (float: epoch seconds), limit (int)
// returns: memory_id, kind, from_tier, to_tier, from_status, to_status, reason, at (float),
//          detail (string|null: an update's prior content),
//          seq (int)
// mode: read
MATCH (t:GraphmemTransition {namespace: $namespace})
WHERE t.at >= $since
RETURN t.memory_id AS memory_id, t.kind AS kind, t.from_tier AS from_tier,
       t.to_tier AS to_tier, t.from_status AS from_status, t.to_status AS to_status,
       t.reason AS reason, t.at AS at, t.seq AS seq, t.detail AS detail
ORDER BY at DESC, seq DESC
LIMIT $limit
