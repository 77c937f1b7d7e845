// name: schema/memory_time
// dialect: neo4j
// purpose: range index for timelines and session order
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX memory_session_time IF NOT EXISTS
FOR (m:Memory) ON (m.namespace, m.session_id, m.created_at)
