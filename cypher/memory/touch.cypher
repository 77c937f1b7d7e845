// name: memory/touch
// purpose: access bookkeeping for retrieved memories, one batched write
// parameters: namespace (string), ids (list of string), at (float, epoch seconds)
// returns: touched (int)
// mode: write
UNWIND $ids AS id
MATCH (m:Memory {namespace: $namespace, id: id})
SET m.access_count = m.access_count + 1, m.last_accessed_at = $at
RETURN count(m) AS touched
