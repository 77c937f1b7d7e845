// name: schema/memory_lookup
// dialect: falkordb
// purpose: range indexes for namespace / id / tier / status / session / time / hash lookups
//          (the unique (namespace, id) constraint is created with GRAPH.CONSTRAINT on top)
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (m:Memory) ON (m.namespace, m.id, m.tier, m.status, m.session_id, m.created_at, m.content_hash)
