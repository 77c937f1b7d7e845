// name: memory/keyword_stats
// purpose: BM25 collection statistics of both keyword fields in one pass over the namespace:
//          per field, documents with a non-empty field, their total length, and for each
//          document the query terms it holds (only documents holding one; the adapter counts
//          document frequencies from them). kw_terms / ctx_terms hold a memory's distinct
//          terms, kw_len / ctx_len the field's length.
// parameters: namespace (string), terms (list of string)
// returns: kw_docs, kw_total (int), kw_matched (list of lists of string), ctx_docs,
//          ctx_total (int), ctx_matched (list of lists of string)
// mode: read
MATCH (m:Memory {namespace: $namespace})
WITH coalesce(m.kw_len, 0) AS kl, coalesce(m.ctx_len, 0) AS cl, m
WITH kl, cl,
     CASE WHEN kl > 0 THEN [t IN $terms WHERE t IN m.kw_terms] ELSE [] END AS kh,
     CASE WHEN cl > 0 THEN [t IN $terms WHERE t IN m.ctx_terms] ELSE [] END AS ch
RETURN sum(CASE WHEN kl > 0 THEN 1 ELSE 0 END) AS kw_docs, sum(kl) AS kw_total,
       collect(CASE WHEN size(kh) > 0 THEN kh END) AS kw_matched,
       sum(CASE WHEN cl > 0 THEN 1 ELSE 0 END) AS ctx_docs, sum(cl) AS ctx_total,
       collect(CASE WHEN size(ch) > 0 THEN ch END) AS ctx_matched
