// name: run/save
// purpose: insert or replace a consolidation run record (plan, progress, report as JSON)
// parameters: id (string), namespace (string | null), status (string), created_at (string,
//             ISO 8601), data (string: the run as JSON)
// returns: id
// mode: write
MERGE (r:GraphmemRun {id: $id})
SET r.namespace = $namespace, r.status = $status, r.created_at = $created_at, r.data = $data
RETURN r.id AS id
