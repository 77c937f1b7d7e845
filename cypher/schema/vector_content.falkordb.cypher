// name: schema/vector_content
// dialect: falkordb
// purpose: HNSW vector index over content embeddings (cosine); M / efConstruction /
//          efRuntime tuned for recall@10 >= 0.95 at 10k memories (bench/, ADR 0003)
// parameters: none
// returns: nothing
// mode: schema
CREATE VECTOR INDEX FOR (m:Memory) ON (m.embedding)
OPTIONS {dimension: 384, similarityFunction: 'cosine', M: 32, efConstruction: 200, efRuntime: 200}
