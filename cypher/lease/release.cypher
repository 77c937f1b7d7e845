// name: lease/release
// purpose: give a lease back (only its owner can)
// parameters: name (string), owner (string)
// returns: released (int)
// mode: write
MATCH (l:GraphmemLease {name: $name, owner: $owner})
DELETE l
RETURN count(*) AS released
