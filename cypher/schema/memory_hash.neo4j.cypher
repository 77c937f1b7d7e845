// name: schema/memory_hash
// dialect: neo4j
// purpose: range index for exact-duplicate detection
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX memory_hash IF NOT EXISTS
FOR (m:Memory) ON (m.namespace, m.content_hash)
