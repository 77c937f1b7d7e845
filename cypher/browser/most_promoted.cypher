// name: browser/most_promoted
// purpose: the memories that proved unexpectedly useful: promoted most recently, with the
//          surprise and access counts that promoted them
// parameters: namespace (string)
// returns: id, tier, preview, surprise_score, access_count, success_count, last_promoted_at
// mode: read
:param namespace => 'demo'

MATCH (m:Memory {namespace: $namespace})
WHERE m.last_promoted_at IS NOT NULL OR m.surprise_score > 0
RETURN m.id AS id, m.tier AS tier, left(m.content, 80) AS preview,
       m.surprise_score AS surprise_score, m.access_count AS access_count,
       m.success_count AS success_count, m.last_promoted_at AS last_promoted_at
ORDER BY m.last_promoted_at DESC, m.surprise_score DESC
LIMIT 25
