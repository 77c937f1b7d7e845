// name: memory/get_scored
// dialect: neo4j
// purpose: memory/get and memory/similarities in one round trip: retrieval's candidates
//          (any status, without vectors) with the cosine of the query vector to their
//          current content and context vectors, computed in the server (ADR 0011, ADR 0017)
// parameters: namespace (string), ids (list of string), vector (list of float, normalised)
// returns: one row per memory with every scalar property of memory/get, and
//          sim_content (float | null), sim_context (float | null)
// mode: read
MATCH (m:Memory {namespace: $namespace})
WHERE m.id IN $ids
OPTIONAL MATCH (v:ContentVector {namespace: $namespace, id: m.id, hash: m.vec_hash})
OPTIONAL MATCH (c:ContextVector {namespace: $namespace, id: m.id, hash: m.ctx_hash})
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
       m.expires_at AS expires_at,
       CASE WHEN v IS NULL THEN null
            ELSE 2.0 * vector.similarity.cosine(v.vector, $vector) - 1.0 END AS sim_content,
       CASE WHEN c IS NULL THEN null
            ELSE 2.0 * vector.similarity.cosine(c.vector, $vector) - 1.0 END AS sim_context
