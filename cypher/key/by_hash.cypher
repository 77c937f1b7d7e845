// name: key/by_hash
// purpose: the key record of a presented key's hash, if it is not revoked
// parameters: hash (string)
// returns: id, namespaces (list of string), role
// mode: read
MATCH (k:GraphmemKey {hash: $hash})
WHERE k.revoked_at IS NULL
RETURN k.id AS id, k.namespaces AS namespaces, k.role AS role
