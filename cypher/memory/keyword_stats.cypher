// name: memory/keyword_stats
// purpose: BM25 collection statistics of both keyword fields as write_batch keeps them
//          (ADR 0016): documents with a non-empty field and their total length per field,
//          and the document frequency of each query term per field. ready is null until
//          memory/keyword_stats_build has counted a namespace written before ADR 0016.
// parameters: namespace (string), terms (list of string)
// returns: ready (bool|null), kw_docs, kw_total, ctx_docs, ctx_total (int|null),
//          df (list of [field, term, df])
// mode: read
OPTIONAL MATCH (k:GraphmemKeywordStats {namespace: $namespace})
WITH k
UNWIND CASE WHEN size($terms) = 0 THEN [null] ELSE $terms END AS term
OPTIONAL MATCH (t:GraphmemTerm {namespace: $namespace, term: term})
RETURN k.ready AS ready, k.kw_docs AS kw_docs, k.kw_total AS kw_total,
       k.ctx_docs AS ctx_docs, k.ctx_total AS ctx_total,
       collect(CASE WHEN t IS NULL THEN null ELSE [t.field, t.term, t.df] END) AS df
