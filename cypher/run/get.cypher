// name: run/get
// purpose: one consolidation run record
// parameters: id (string)
// returns: data (string: the run as JSON)
// mode: read
MATCH (r:GraphmemRun {id: $id})
RETURN r.data AS data
