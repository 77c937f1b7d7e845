// name: key/revoke
// purpose: revoke an active key (a revoked key stays listed)
// parameters: id (string), at (float, POSIX seconds)
// returns: revoked (int): 1 when an active key was revoked, else 0
// mode: write
OPTIONAL MATCH (k:GraphmemKey {id: $id})
WHERE k.revoked_at IS NULL
SET k.revoked_at = $at
RETURN count(k) AS revoked
