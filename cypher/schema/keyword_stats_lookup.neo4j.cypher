// name: schema/keyword_stats_lookup
// dialect: neo4j
// purpose: range index for a namespace's (:GraphmemKeywordStats) node (ADR 0016)
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX keyword_stats_lookup IF NOT EXISTS
FOR (k:GraphmemKeywordStats) ON (k.namespace)
