// name: run/list
// purpose: every consolidation run record, newest first
// parameters: none
// returns: data (string: the run as JSON)
// mode: read
MATCH (r:GraphmemRun)
RETURN r.data AS data
ORDER BY r.created_at DESC, r.id
