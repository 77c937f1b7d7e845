// name: browser/disputed_pairs
// purpose: memories that contradict each other (nothing is deleted: both sides stay and
//          retrieval flags them as disputed) - decide which one to keep, pin or fix
// parameters: namespace (string)
// returns: claim, disputed_by, claim_id, other_id, since (epoch seconds)
// mode: read
:param namespace => 'demo'

MATCH (a:Memory {namespace: $namespace})-[c:CONTRADICTS]->(b:Memory)
RETURN a.content AS claim, b.content AS disputed_by, a.id AS claim_id, b.id AS other_id,
       c.created_at AS since
ORDER BY since DESC
LIMIT 50
