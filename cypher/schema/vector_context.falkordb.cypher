// name: schema/vector_context
// dialect: falkordb
// purpose: HNSW vector index (cosine) over the append-only (:ContextVector) nodes; M /
//          efConstruction / efRuntime tuned for recall@10 >= 0.95 at 10k memories (ADR 0003)
// parameters: none
// returns: nothing
// mode: schema
CREATE VECTOR INDEX FOR (v:ContextVector) ON (v.vector)
OPTIONS {dimension: 384, similarityFunction: 'cosine', M: 32, efConstruction: 400, efRuntime: 400}
