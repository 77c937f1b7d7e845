// name: search/keyword
// dialect: falkordb
// purpose: keyword seeds from the full-text index (RediSearch), scoped to a namespace,
//          statuses and tiers; the query is pre-analysed stems joined with '|' (any may match)
// parameters: query (string), namespace (string), statuses (list of string),
//             tiers (list of string | null), k (int)
// returns: id, score (float, higher is better)
// mode: read
CALL db.idx.fulltext.queryNodes('Memory', $query) YIELD node, score
WITH node, score
WHERE node.namespace = $namespace AND node.status IN $statuses
  AND ($tiers IS NULL OR node.tier IN $tiers)
RETURN node.id AS id, score
ORDER BY score DESC
LIMIT $k
