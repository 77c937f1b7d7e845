// name: browser/causal_chains
// purpose: causal chains of up to four CAUSES hops, starting at memories nothing causes
// parameters: namespace (string)
// returns: chain (path), hops (up to 25 chains, longest first)
// mode: read
:param namespace => 'demo'

MATCH chain = (root:Memory {namespace: $namespace})-[:CAUSES*1..4]->(effect:Memory)
WHERE NOT EXISTS { MATCH (:Memory)-[:CAUSES]->(root) }
RETURN chain, length(chain) AS hops
ORDER BY hops DESC
LIMIT 25
