// name: memory/write_batch
// dialect: neo4j
// purpose: apply one WriteBatch atomically in a single statement (FalkorDB has no
//          multi-statement transactions): delete edges, delete memories (DETACH; the prior contents
//          their transitions kept are dropped), upsert memories whole, patch memories, upsert edges per type, record transitions (relationship types come from this file,
//          never from input).
//          Vectors live on append-only (:ContentVector) / (:ContextVector) nodes keyed by
//          (namespace, id, hash): a changed vector gets a new node and the memory's vec_hash /
//          ctx_hash points at it; stale nodes are filtered by that hash and vacuumed later.
//          Never SET or DELETE an indexed vector node: FalkorDB 4.16 loses HNSW hits then
//          (ADR 0003). A memory given without embedding keeps its stored vectors; a vector
//          node that already exists (a stale one: the content changed back, or the id was
//          deleted and written again) is pointed at again, never duplicated.
//          Term nodes are taken in (field, term) order, so two batches never wait on
//          each other's term locks in opposite orders (a deadlock Neo4j retries).
//          Keyword statistics follow the deletes and upserts (ADR 0016): document counts
//          and lengths per field on (:GraphmemKeywordStats), document frequencies per term
//          on (:GraphmemTerm), from each memory's term lists before and after the batch.
//          First the sessions whose FOLLOWS chain the batch changes are claimed: their
//          (:GraphmemSession) version must be the one the writer planned against, else
//          the statement fails (a division by zero, the one error Cypher lets a query
//          raise) and the writer plans again; the claim takes the node's write lock first
//          (SET), so a concurrent claim reads the committed version.
//          New memories (p.new) are CREATEd first, whole (FalkorDB shows a reader the
//          clauses of a running write as they finish): the (namespace, id) and the
//          (namespace, dedupe_key) uniqueness constraints refuse an id that exists and an
//          active twin written meanwhile by another process, and the whole statement with
//          them (issue 45). dedupe_key, the content hash of a memory created active, leaves
//          when the memory stops being active or its content changes; it never returns.
// parameters: namespace (string); sessions (list of {id, version}); delete_edges (list of
//             {source_id, target_id, type});
//             delete_ids (list of string); memories (list of {id, seq, new (bool),
//             dedupe_key (string|null), props (map of scalar properties), embedding
//             (list|null), vec_hash (string|null), context_embedding (list|null),
//             ctx_hash (string|null)});
//             causes (list), references (list), similar_to (list), contradicts (list),
//             summarizes (list), follows (list): the edges to upsert by type, each
//             {source_id, target_id, score, created_at, source};
//             patches (list of {id, props}: field-level updates of existing memories);
//             transitions (list of {memory_id, kind, from_tier, to_tier, from_status,
//             to_status, reason, at, seq, detail}: the tier dynamics log, (:GraphmemTransition) nodes)
// returns: done (1)
// mode: write
UNWIND $sessions AS s
MERGE (x:GraphmemSession {namespace: $namespace, id: s.id})
ON CREATE SET x.version = 0
SET x.held = true
WITH x, 1 / CASE WHEN x.version = s.version THEN 1 ELSE 0 END AS step
SET x.version = x.version + step
WITH count(*) AS sessions_claimed
UNWIND $delete_edges AS d
MATCH (a:Memory {namespace: $namespace, id: d.source_id})-[r]->(b:Memory {namespace: $namespace, id: d.target_id})
WHERE type(r) = d.type
DELETE r
WITH count(*) AS edges_deleted
UNWIND $delete_ids AS did
MATCH (m:Memory {namespace: $namespace, id: did})
WITH m, coalesce(m.kw_terms, []) AS okw, coalesce(m.ctx_terms, []) AS octx,
     coalesce(m.kw_len, 0) AS okl, coalesce(m.ctx_len, 0) AS ocl
DETACH DELETE m
WITH count(*) AS memories_deleted,
     collect([x IN okw | {f: 'kw', t: x, d: -1}] + [x IN octx | {f: 'ctx', t: x, d: -1}]) AS dl,
     sum(CASE WHEN okl > 0 THEN 1 ELSE 0 END) AS kd, sum(okl) AS kt,
     sum(CASE WHEN ocl > 0 THEN 1 ELSE 0 END) AS cd, sum(ocl) AS ct
MERGE (k:GraphmemKeywordStats {namespace: $namespace})
SET k.kw_docs = coalesce(k.kw_docs, 0) - kd, k.kw_total = coalesce(k.kw_total, 0) - kt,
    k.ctx_docs = coalesce(k.ctx_docs, 0) - cd, k.ctx_total = coalesce(k.ctx_total, 0) - ct
WITH dl
UNWIND dl AS l
UNWIND l AS d
WITH d.f AS f, d.t AS t, sum(d.d) AS n
ORDER BY f, t
MERGE (s:GraphmemTerm {namespace: $namespace, field: f, term: t})
SET s.df = coalesce(s.df, 0) + n
WITH count(*) AS deleted_terms_counted
UNWIND $delete_ids AS did
MATCH (t:GraphmemTransition {namespace: $namespace, memory_id: did})
WHERE t.detail IS NOT NULL
SET t.detail = null
WITH count(*) AS details_dropped
UNWIND [p IN $memories WHERE p.new] AS p
CREATE (m:Memory {namespace: $namespace, id: p.id, seq: p.seq})
SET m += p.props, m.dedupe_key = p.dedupe_key
WITH count(*) AS memories_created
UNWIND $memories AS p
MERGE (m:Memory {namespace: $namespace, id: p.id})
ON CREATE SET m.seq = p.seq
WITH m, p, m.vec_hash AS old_vec, m.ctx_hash AS old_ctx,
     coalesce(m.kw_terms, []) AS okw, coalesce(m.ctx_terms, []) AS octx,
     coalesce(m.kw_len, 0) AS okl, coalesce(m.ctx_len, 0) AS ocl
OPTIONAL MATCH (cv:ContentVector {namespace: $namespace, id: p.id, hash: p.vec_hash})
WITH m, p, old_vec, old_ctx, okw, octx, okl, ocl, count(cv) AS have_vec
OPTIONAL MATCH (xv:ContextVector {namespace: $namespace, id: p.id, hash: p.ctx_hash})
WITH m, p, old_vec, old_ctx, okw, octx, okl, ocl, have_vec, count(xv) AS have_ctx
SET m.dedupe_key = CASE WHEN p.props.status <> 'active'
                             OR m.content_hash <> p.props.content_hash THEN null
                        ELSE m.dedupe_key END
SET m += p.props
FOREACH (_ IN CASE WHEN p.embedding IS NOT NULL AND have_vec = 0
                    AND (old_vec IS NULL OR old_vec <> p.vec_hash) THEN [1] ELSE [] END |
  CREATE (:ContentVector {namespace: $namespace, id: p.id, hash: p.vec_hash, vector: p.embedding}))
FOREACH (_ IN CASE WHEN p.context_embedding IS NOT NULL AND have_ctx = 0
                    AND (old_ctx IS NULL OR old_ctx <> p.ctx_hash) THEN [1] ELSE [] END |
  CREATE (:ContextVector {namespace: $namespace, id: p.id, hash: p.ctx_hash, vector: p.context_embedding}))
SET m.vec_hash = CASE WHEN p.embedding IS NULL THEN old_vec ELSE p.vec_hash END,
    m.ctx_hash = CASE WHEN p.embedding IS NULL THEN old_ctx ELSE p.ctx_hash END
WITH count(*) AS memories_written,
     collect([x IN p.props.kw_terms WHERE NOT x IN okw | {f: 'kw', t: x, d: 1}]
             + [x IN okw WHERE NOT x IN p.props.kw_terms | {f: 'kw', t: x, d: -1}]
             + [x IN p.props.ctx_terms WHERE NOT x IN octx | {f: 'ctx', t: x, d: 1}]
             + [x IN octx WHERE NOT x IN p.props.ctx_terms | {f: 'ctx', t: x, d: -1}]) AS dl,
     sum(CASE WHEN p.props.kw_len > 0 THEN 1 ELSE 0 END
         - CASE WHEN okl > 0 THEN 1 ELSE 0 END) AS kd, sum(p.props.kw_len - okl) AS kt,
     sum(CASE WHEN p.props.ctx_len > 0 THEN 1 ELSE 0 END
         - CASE WHEN ocl > 0 THEN 1 ELSE 0 END) AS cd, sum(p.props.ctx_len - ocl) AS ct
MERGE (k:GraphmemKeywordStats {namespace: $namespace})
SET k.kw_docs = coalesce(k.kw_docs, 0) + kd, k.kw_total = coalesce(k.kw_total, 0) + kt,
    k.ctx_docs = coalesce(k.ctx_docs, 0) + cd, k.ctx_total = coalesce(k.ctx_total, 0) + ct
WITH dl
UNWIND dl AS l
UNWIND l AS d
WITH d.f AS f, d.t AS t, sum(d.d) AS n
WHERE n <> 0
WITH f, t, n ORDER BY f, t
MERGE (s:GraphmemTerm {namespace: $namespace, field: f, term: t})
SET s.df = coalesce(s.df, 0) + n
WITH count(*) AS written_terms_counted
UNWIND $patches AS p
MATCH (m:Memory {namespace: $namespace, id: p.id})
SET m += p.props
SET m.dedupe_key = CASE WHEN m.status <> 'active' THEN null ELSE m.dedupe_key END
WITH count(*) AS memories_patched
UNWIND $causes AS e
MATCH (a:Memory {namespace: $namespace, id: e.source_id}), (b:Memory {namespace: $namespace, id: e.target_id})
MERGE (a)-[r:CAUSES]->(b)
ON CREATE SET r.created_at = e.created_at
SET r.score = e.score, r.source = e.source
WITH count(*) AS causes_written
UNWIND $references AS e
MATCH (a:Memory {namespace: $namespace, id: e.source_id}), (b:Memory {namespace: $namespace, id: e.target_id})
MERGE (a)-[r:REFERENCES]->(b)
ON CREATE SET r.created_at = e.created_at
SET r.score = e.score, r.source = e.source
WITH count(*) AS references_written
UNWIND $similar_to AS e
MATCH (a:Memory {namespace: $namespace, id: e.source_id}), (b:Memory {namespace: $namespace, id: e.target_id})
MERGE (a)-[r:SIMILAR_TO]->(b)
ON CREATE SET r.created_at = e.created_at
SET r.score = e.score, r.source = e.source
WITH count(*) AS similar_to_written
UNWIND $contradicts AS e
MATCH (a:Memory {namespace: $namespace, id: e.source_id}), (b:Memory {namespace: $namespace, id: e.target_id})
MERGE (a)-[r:CONTRADICTS]->(b)
ON CREATE SET r.created_at = e.created_at
SET r.score = e.score, r.source = e.source
WITH count(*) AS contradicts_written
UNWIND $summarizes AS e
MATCH (a:Memory {namespace: $namespace, id: e.source_id}), (b:Memory {namespace: $namespace, id: e.target_id})
MERGE (a)-[r:SUMMARIZES]->(b)
ON CREATE SET r.created_at = e.created_at
SET r.score = e.score, r.source = e.source
WITH count(*) AS summarizes_written
UNWIND $follows AS e
MATCH (a:Memory {namespace: $namespace, id: e.source_id}), (b:Memory {namespace: $namespace, id: e.target_id})
MERGE (a)-[r:FOLLOWS]->(b)
ON CREATE SET r.created_at = e.created_at
SET r.score = e.score, r.source = e.source
WITH count(*) AS follows_written
UNWIND $transitions AS t
CREATE (:GraphmemTransition {namespace: $namespace, memory_id: t.memory_id, kind: t.kind,
                             from_tier: t.from_tier, to_tier: t.to_tier,
                             from_status: t.from_status, to_status: t.to_status,
                             reason: t.reason, at: t.at, seq: t.seq, detail: t.detail})
WITH count(*) AS transitions_recorded
RETURN 1 AS done
