// name: browser/causal_chains
// dialect: falkordb
// purpose: causal chains of up to four CAUSES hops, starting at memories nothing causes
//          (FalkorDB has no EXISTS {} subquery: an OPTIONAL MATCH finds the roots)
// parameters: namespace (string)
// returns: chain (path), hops (up to 25 chains, longest first)
// mode: read
MATCH (root:Memory {namespace: $namespace})
OPTIONAL MATCH (cause:Memory)-[:CAUSES]->(root)
WITH root, cause
WHERE cause IS NULL
MATCH chain = (root)-[:CAUSES*1..4]->(effect:Memory)
RETURN chain, length(chain) AS hops
ORDER BY hops DESC
LIMIT 25
