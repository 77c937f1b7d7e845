// name: memory/transitions_of
// purpose: one memory's recorded tier transitions, oldest first
// parameters: namespace (string), memory_id (string)
// returns: memory_id, kind, from_tier, to_tier, from_status, to_status, reason, at (float),
//          detail (string|null: an update's prior content),
//          seq (int: the order they were recorded in, for ties in at)
// mode: read
MATCH (t:GraphmemTransition {namespace: $namespace, memory_id: $memory_id})
RETURN t.memory_id AS memory_id, t.kind AS kind, t.from_tier AS from_tier,
       t.to_tier AS to_tier, t.from_status AS from_status, t.to_status AS to_status,
       t.reason AS reason, t.at AS at, t.seq AS seq, t.detail AS detail
ORDER BY at, seq
