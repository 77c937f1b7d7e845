// name: schema/memory_created
// dialect: neo4j
// purpose: range index for age-based selection (consolidation, maintenance)
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX memory_created IF NOT EXISTS
FOR (m:Memory) ON (m.namespace, m.created_at)
