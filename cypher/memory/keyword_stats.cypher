// name: memory/keyword_stats
// purpose: BM25 collection statistics of one keyword field: documents with a non-empty field,
//          their total length, and for each document the query terms it holds (only documents
//          holding one; the adapter counts document frequencies from them). kw_terms /
//          ctx_terms hold a memory's distinct terms, kw_len / ctx_len the field's length.
// parameters: namespace (string), field (string: 'keywords' | 'context_keywords'),
//             terms (list of string)
// returns: docs (int), total_length (int), matched (list of lists of string)
// mode: read
MATCH (m:Memory {namespace: $namespace})
WITH CASE WHEN $field = 'keywords' THEN m.kw_len ELSE m.ctx_len END AS len,
     CASE WHEN $field = 'keywords' THEN m.kw_terms ELSE m.ctx_terms END AS held
WHERE len > 0
WITH len, [t IN $terms WHERE t IN held] AS hits
RETURN count(*) AS docs, sum(len) AS total_length,
       collect(CASE WHEN size(hits) > 0 THEN hits END) AS matched
