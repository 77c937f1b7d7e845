// name: search/keyword_candidates
// dialect: falkordb
// purpose: search/keyword with the candidates' analysed keyword fields (ADR 0007 ranks them in
//          graphmem), in one reply: each column is one string joined by $sep, in the index's
//          order, because FalkorDB's client builds ~3 Python objects per returned value
//          (1,000 rows x 3 columns took ~7 ms to parse; one cell per column takes ~0.1 ms,
//          ADR 0017). Ids (validated: letters, digits, _.:-) and analysed keywords (letters and
//          digits between spaces) never hold $sep, a newline; n lets the adapter check that.
// parameters: query (string), namespace (string), statuses (list of string),
//             tiers (list of string | null), k (int), sep (string)
// returns: n (int), ids, keywords, context_keywords (strings joined by sep)
// mode: read
CALL db.idx.fulltext.queryNodes('Memory', $query) YIELD node, score
WITH node, score
WHERE node.namespace = $namespace AND node.status IN $statuses
  AND ($tiers IS NULL OR node.tier IN $tiers)
WITH node, score
ORDER BY score DESC
LIMIT $k
WITH collect(node) AS found
RETURN size(found) AS n,
       string.join([x IN found | x.id], $sep) AS ids,
       string.join([x IN found | coalesce(x.keywords, '')], $sep) AS keywords,
       string.join([x IN found | coalesce(x.context_keywords, '')], $sep) AS context_keywords
