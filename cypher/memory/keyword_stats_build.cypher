// name: memory/keyword_stats_build
// purpose: count a namespace's keyword statistics from its memories once (ADR 0016; a
//          namespace written before write_batch kept them): the (:GraphmemTerm) nodes are
//          replaced, the (:GraphmemKeywordStats) node set and marked ready. One statement,
//          so no write interleaves.
// parameters: namespace (string)
// returns: terms (int: the ctx terms counted; the statement's one row)
// mode: write
OPTIONAL MATCH (old:GraphmemTerm {namespace: $namespace})
DELETE old
WITH count(*) AS cleared
OPTIONAL MATCH (m:Memory {namespace: $namespace})
WITH sum(CASE WHEN coalesce(m.kw_len, 0) > 0 THEN 1 ELSE 0 END) AS kd,
     sum(coalesce(m.kw_len, 0)) AS kt,
     sum(CASE WHEN coalesce(m.ctx_len, 0) > 0 THEN 1 ELSE 0 END) AS cd,
     sum(coalesce(m.ctx_len, 0)) AS ct
MERGE (k:GraphmemKeywordStats {namespace: $namespace})
SET k.kw_docs = kd, k.kw_total = kt, k.ctx_docs = cd, k.ctx_total = ct, k.ready = true
WITH count(*) AS marked
MATCH (m:Memory {namespace: $namespace})
UNWIND coalesce(m.kw_terms, []) AS t
WITH t, count(*) AS n
CREATE (:GraphmemTerm {namespace: $namespace, field: 'kw', term: t, df: n})
WITH count(*) AS kw_terms
MATCH (m:Memory {namespace: $namespace})
UNWIND coalesce(m.ctx_terms, []) AS t
WITH t, count(*) AS n
CREATE (:GraphmemTerm {namespace: $namespace, field: 'ctx', term: t, df: n})
WITH count(*) AS ctx_terms
RETURN ctx_terms AS terms
