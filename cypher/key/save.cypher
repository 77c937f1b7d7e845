// name: key/save
// purpose: store a new API key record (its SHA-256 hash, never the key), shared by every API
//          replica of this database
// parameters: id (string), hash (string), namespaces (list of string), role (string),
//             label (string | null), created_at (float, POSIX seconds)
// returns: id
// mode: write
CREATE (k:GraphmemKey {id: $id, hash: $hash, namespaces: $namespaces, role: $role,
                       label: $label, created_at: $created_at, revoked_at: null})
RETURN k.id AS id
