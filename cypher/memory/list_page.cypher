// name: memory/list_page
// purpose: one page of a filtered, sorted listing (ListSpec), keyset pagination on (sort key, id)
// parameters: namespace (string), statuses (list of string | null), tiers (list of string |
//             null), types (list of string | null), source (string | null), session_id
//             (string | null), topic (string | null), since (float | null: event time, at
//             or after), until (float | null: before), sort (string: created_at, stored_at,
//             updated_at, last_accessed_at or importance), sign (int: 1 ascending, -1
//             descending), after_key (float | null: sign x the sort value of the last row of
//             the page before), after_id (string | null), limit (int), now (float | null:
//             statuses as of then, an active memory whose expires_at is past counts as
//             expired; null: as stored)
// returns: one row per memory with every scalar property, in the listing's order
// mode: read
MATCH (m:Memory {namespace: $namespace})
WHERE ($statuses IS NULL OR CASE WHEN $now IS NOT NULL AND m.status = 'active'
                                    AND m.expires_at <= $now THEN 'expired'
                               ELSE m.status END IN $statuses)
  AND ($tiers IS NULL OR m.tier IN $tiers)
  AND ($types IS NULL OR coalesce(m.type, CASE WHEN m.kind = 'summary' THEN 'summary'
                                              ELSE 'observation' END) IN $types)
  AND ($source IS NULL OR m.source = $source)
  AND ($session_id IS NULL OR m.session_id = $session_id)
  AND ($topic IS NULL OR m.topic = $topic)
  AND ($since IS NULL OR m.created_at >= $since)
  AND ($until IS NULL OR m.created_at < $until)
WITH m, $sign * CASE $sort WHEN 'created_at' THEN m.created_at
                           WHEN 'stored_at' THEN coalesce(m.stored_at, m.last_accessed_at)
                           WHEN 'updated_at' THEN m.updated_at
                           WHEN 'last_accessed_at' THEN m.last_accessed_at
                           ELSE m.importance END AS k
WHERE $after_key IS NULL OR k > $after_key
   OR (k = $after_key AND (($sign = 1 AND m.id > $after_id) OR ($sign = -1 AND m.id < $after_id)))
WITH m, k ORDER BY k, CASE WHEN $sign = 1 THEN m.id END, CASE WHEN $sign = -1 THEN m.id END DESC
LIMIT $limit
RETURN m.id AS id,
       m.namespace AS namespace,
       m.content AS content,
       m.kind AS kind,
       m.tier AS tier,
       m.base_importance AS base_importance,
       m.importance AS importance,
       m.pinned AS pinned,
       m.created_at AS created_at,
       m.updated_at AS updated_at,
       m.last_accessed_at AS last_accessed_at,
       m.access_count AS access_count,
       m.surprise_score AS surprise_score,
       m.success_count AS success_count,
       m.failure_count AS failure_count,
       m.last_promoted_at AS last_promoted_at,
       m.source AS source,
       m.topic AS topic,
       m.session_id AS session_id,
       m.metadata AS metadata,
       m.status AS status,
       m.content_hash AS content_hash,
       m.keywords AS keywords,
       m.context_keywords AS context_keywords,
       m.window_start AS window_start,
       m.window_count AS window_count,
       m.last_predicted AS last_predicted,
       m.stored_at AS stored_at,
       m.reinforced_at AS reinforced_at,
       m.type AS type,
       m.valid_from AS valid_from,
       m.valid_until AS valid_until,
       m.superseded_by AS superseded_by,
       m.used_by AS used_by,
       m.mentioned AS mentioned,
       m.expires_at AS expires_at
