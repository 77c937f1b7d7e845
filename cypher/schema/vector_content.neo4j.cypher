// name: schema/vector_content
// dialect: neo4j
// purpose: HNSW vector index (cosine) over the append-only (:ContentVector) nodes
// parameters: none
// returns: nothing
// mode: schema
CREATE VECTOR INDEX content_vector IF NOT EXISTS
FOR (v:ContentVector) ON (v.vector)
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine',
                      `vector.quantization.enabled`: false}}
