// name: memory/get_scored
// dialect: falkordb
// purpose: memory/get and memory/similarities in one round trip: retrieval's candidates
//          (any status, without vectors) with the cosine of the query vector to their
//          current content and context vectors, computed in the server (ADR 0011). The
//          fields no caller writes freely (ids, enums, numbers, hashes, analysed keywords)
//          travel as one toJSON cell per memory, the free text (which FalkorDB's toJSON does
//          not escape) in their own cells: FalkorDB's client builds ~3 Python objects per
//          returned value, 36 per memory took ~8 ms for 150 memories (ADR 0017)
// parameters: namespace (string), ids (list of string), vector (list of float, normalised)
// returns: packed (string: a JSON map of the other fields of memory/get, with sim_content
//          and sim_context (float | null)), content, source, topic, session_id, metadata,
//          type, used_by, mentioned
// mode: read
MATCH (m:Memory {namespace: $namespace})
WHERE m.id IN $ids
OPTIONAL MATCH (v:ContentVector {namespace: $namespace, id: m.id, hash: m.vec_hash})
OPTIONAL MATCH (c:ContextVector {namespace: $namespace, id: m.id, hash: m.ctx_hash})
WITH m, v, c, vecf32($vector) AS q
RETURN toJSON({
                id: m.id,
                namespace: m.namespace,
                kind: m.kind,
                tier: m.tier,
                base_importance: m.base_importance,
                importance: m.importance,
                pinned: m.pinned,
                created_at: m.created_at,
                updated_at: m.updated_at,
                last_accessed_at: m.last_accessed_at,
                access_count: m.access_count,
                surprise_score: m.surprise_score,
                success_count: m.success_count,
                failure_count: m.failure_count,
                last_promoted_at: m.last_promoted_at,
                status: m.status,
                content_hash: m.content_hash,
                keywords: m.keywords,
                context_keywords: m.context_keywords,
                window_start: m.window_start,
                window_count: m.window_count,
                last_predicted: m.last_predicted,
                stored_at: m.stored_at,
                reinforced_at: m.reinforced_at,
                valid_from: m.valid_from,
                valid_until: m.valid_until,
                superseded_by: m.superseded_by,
                expires_at: m.expires_at,
                sim_content: CASE WHEN v IS NULL THEN null
                                  ELSE 1.0 - vec.cosineDistance(v.vector, q) END,
                sim_context: CASE WHEN c IS NULL THEN null
                                  ELSE 1.0 - vec.cosineDistance(c.vector, q) END}) AS packed,
       m.content AS content,
       m.source AS source,
       m.topic AS topic,
       m.session_id AS session_id,
       m.metadata AS metadata,
       m.type AS type,
       m.used_by AS used_by,
       m.mentioned AS mentioned
