// name: lease/acquire
// purpose: take or renew a named lease (one job at a time across processes) unless another
//          owner holds it past now
// parameters: name (string), owner (string), until (float), now (float)
// returns: owner (string): the holder after this statement
// mode: write
MERGE (l:GraphmemLease {name: $name})
ON CREATE SET l.owner = $owner, l.expires_at = $until
WITH l
SET l.owner = CASE WHEN l.owner = $owner OR l.expires_at <= $now THEN $owner ELSE l.owner END,
    l.expires_at = CASE WHEN l.owner = $owner OR l.expires_at <= $now THEN $until
                        ELSE l.expires_at END
RETURN l.owner AS owner
