// name: search/keyword
// dialect: neo4j
// purpose: keyword seeds from the full-text index (Lucene, whitespace analyzer), scoped to a
//          namespace, statuses and tiers; the query is pre-analysed stems separated by spaces
//          (any may match)
// parameters: query (string), namespace (string), statuses (list of string),
//             tiers (list of string | null), k (int)
// returns: id, score (float, higher is better)
// mode: read
CALL db.index.fulltext.queryNodes('memory_keywords', $query) YIELD node, score
WITH node, score
WHERE node.namespace = $namespace AND node.status IN $statuses
  AND ($tiers IS NULL OR node.tier IN $tiers)
RETURN node.id AS id, score
ORDER BY score DESC
LIMIT $k
