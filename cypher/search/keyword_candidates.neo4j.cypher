// name: search/keyword_candidates
// dialect: neo4j
// purpose: search/keyword with the candidates' analysed keyword fields (ADR 0007 ranks them in
//          graphmem), one row per candidate in the index's order (Bolt ships rows cheaply;
//          FalkorDB's variant joins them into strings, ADR 0017)
// parameters: query (string), namespace (string), statuses (list of string),
//             tiers (list of string | null), k (int)
// returns: id, keywords, context_keywords
// mode: read
CALL db.index.fulltext.queryNodes('memory_keywords', $query) YIELD node, score
WITH node, score
WHERE node.namespace = $namespace AND node.status IN $statuses
  AND ($tiers IS NULL OR node.tier IN $tiers)
RETURN node.id AS id, coalesce(node.keywords, '') AS keywords,
       coalesce(node.context_keywords, '') AS context_keywords
ORDER BY score DESC
LIMIT $k
