// name: memory/write_batch
// dialect: falkordb
// purpose: apply one WriteBatch atomically in a single statement (FalkorDB has no
//          multi-statement transactions): delete edges, delete memories (DETACH), upsert
//          memories whole, upsert edges per type (relationship types come from this file,
//          never from input). A memory given without embedding keeps its stored vectors.
// parameters: namespace (string); delete_edges (list of {source_id, target_id, type});
//             delete_ids (list of string); memories (list of {id, seq, props (map of scalar
//             properties), embedding (list|null), context_embedding (list|null)});
//             causes, references, similar_to, contradicts, summarizes, follows (lists of {source_id, target_id, score,
//             created_at, source})
// returns: done (1)
// mode: write
UNWIND $delete_edges AS d
MATCH (a:Memory {namespace: $namespace, id: d.source_id})-[r]->(b:Memory {namespace: $namespace, id: d.target_id})
WHERE type(r) = d.type
DELETE r
WITH count(*) AS edges_deleted
UNWIND $delete_ids AS did
MATCH (m:Memory {namespace: $namespace, id: did})
DETACH DELETE m
WITH count(*) AS memories_deleted
UNWIND $memories AS p
MERGE (m:Memory {namespace: $namespace, id: p.id})
ON CREATE SET m.seq = p.seq
SET m += p.props
SET m.embedding = CASE WHEN p.embedding IS NULL THEN m.embedding ELSE vecf32(p.embedding) END,
    m.context_embedding = CASE WHEN p.embedding IS NULL THEN m.context_embedding
                               WHEN p.context_embedding IS NULL THEN NULL
                               ELSE vecf32(p.context_embedding) END
WITH count(*) AS memories_written
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
RETURN 1 AS done
