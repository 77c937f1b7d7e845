// name: schema/memory_lookup
// dialect: neo4j
// purpose: range index for tier / status lookups inside a namespace
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX memory_tier_status IF NOT EXISTS
FOR (m:Memory) ON (m.namespace, m.tier, m.status)
