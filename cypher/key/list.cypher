// name: key/list
// purpose: every key record, oldest first (no hashes)
// parameters: none
// returns: id, namespaces, role, label, created_at (float), revoked_at (float | null)
// mode: read
MATCH (k:GraphmemKey)
RETURN k.id AS id, k.namespaces AS namespaces, k.role AS role, k.label AS label,
       k.created_at AS created_at, k.revoked_at AS revoked_at
ORDER BY k.created_at, k.id
