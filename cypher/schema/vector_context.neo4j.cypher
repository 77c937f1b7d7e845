// name: schema/vector_context
// dialect: neo4j
// purpose: HNSW vector index (cosine) over the append-only (:ContextVector) nodes
// parameters: none
// returns: nothing
// mode: schema
CREATE VECTOR INDEX context_vector IF NOT EXISTS
FOR (v:ContextVector) ON (v.vector)
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine',
                      `vector.quantization.enabled`: false}}
