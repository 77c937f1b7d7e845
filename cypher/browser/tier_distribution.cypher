// name: browser/tier_distribution
// purpose: how a namespace's memories spread over tiers and statuses, with their mean
//          decayed importance - the first look at tier health
// parameters: namespace (string)
// returns: tier, status, memories, mean_importance, pinned
// mode: read
:param namespace => 'demo'

MATCH (m:Memory {namespace: $namespace})
RETURN m.tier AS tier, m.status AS status, count(m) AS memories,
       round(avg(m.importance) * 1000) / 1000.0 AS mean_importance,
       sum(CASE WHEN m.pinned THEN 1 ELSE 0 END) AS pinned
ORDER BY tier, status
