// name: schema/vector_content
// dialect: neo4j
// purpose: HNSW vector index over content embeddings (cosine)
// parameters: none (dimensions are fixed at 384, the default model)
// returns: nothing
// mode: schema
CREATE VECTOR INDEX memory_embedding IF NOT EXISTS
FOR (m:Memory) ON (m.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}
