// name: schema/vector_context
// dialect: neo4j
// purpose: HNSW vector index over "predecessor + this" context embeddings (cosine)
// parameters: none
// returns: nothing
// mode: schema
CREATE VECTOR INDEX memory_context_embedding IF NOT EXISTS
FOR (m:Memory) ON (m.context_embedding)
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}
