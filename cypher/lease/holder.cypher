// name: lease/holder
// purpose: who holds a named lease and until when (expired or not)
// parameters: name (string)
// returns: owner (string), expires_at (float); no row when nobody ever took it
// mode: read
MATCH (l:GraphmemLease {name: $name})
RETURN l.owner AS owner, l.expires_at AS expires_at
