// name: memory/transition_counts
// purpose: recorded tier transitions of a namespace by kind and tiers, in total and since a
//          time (stats: promotions / demotions / evictions in the last hour and overall)
// parameters: namespace (string), since (float, epoch seconds)
// returns: kind, from_tier, to_tier, total (int), recent (int)
// mode: read
MATCH (t:GraphmemTransition {namespace: $namespace})
RETURN t.kind AS kind, t.from_tier AS from_tier, t.to_tier AS to_tier, count(t) AS total,
       sum(CASE WHEN t.at >= $since THEN 1 ELSE 0 END) AS recent
