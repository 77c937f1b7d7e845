// name: schema/keyword_stats_lookup
// dialect: falkordb
// purpose: range index for a namespace's (:GraphmemKeywordStats) node (ADR 0016)
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (k:GraphmemKeywordStats) ON (k.namespace)
