// name: memory/active_columns
// dialect: neo4j
// purpose: the numbers operators' statistics aggregate, per active memory of a namespace
//          (tier, base importance, reinforced_at, created_at, surprise, stored_at), without
//          reading whole memories (ADR 0018)
// parameters: namespace (string)
// returns: tier, base_importance, reinforced_at (float), created_at (float), surprise,
//          stored_at (float)
// mode: read
MATCH (m:Memory {namespace: $namespace})
WHERE m.status = 'active'
RETURN m.tier AS tier, m.base_importance AS base_importance,
       coalesce(m.reinforced_at, m.last_accessed_at) AS reinforced_at,
       m.created_at AS created_at, m.surprise_score AS surprise,
       coalesce(m.stored_at, m.last_accessed_at) AS stored_at
