// name: schema/vector_context
// dialect: falkordb
// purpose: HNSW vector index over "predecessor + this" context embeddings (cosine)
// parameters: none
// returns: nothing
// mode: schema
CREATE VECTOR INDEX FOR (m:Memory) ON (m.context_embedding)
OPTIONS {dimension: 384, similarityFunction: 'cosine', M: 32, efConstruction: 200, efRuntime: 200}
