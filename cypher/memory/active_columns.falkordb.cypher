// name: memory/active_columns
// dialect: falkordb
// purpose: the numbers operators' statistics aggregate, per active memory of a namespace
//          (tier, base importance, reinforced_at, created_at, surprise, stored_at), without
//          reading whole memories (ADR 0018); as one toJSON cell, since FalkorDB's client
//          builds ~3 Python objects per returned value (ADR 0017). Tier names and numbers
//          only: nothing toJSON would have to escape.
// parameters: namespace (string)
// returns: packed (string: a JSON list of [tier, base_importance, reinforced_at,
//          created_at, surprise, stored_at])
// mode: read
MATCH (m:Memory {namespace: $namespace})
WHERE m.status = 'active'
RETURN toJSON(collect([m.tier, m.base_importance,
                       coalesce(m.reinforced_at, m.last_accessed_at),
                       m.created_at, m.surprise_score,
                       coalesce(m.stored_at, m.last_accessed_at)])) AS packed
