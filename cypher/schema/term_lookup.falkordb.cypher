// name: schema/term_lookup
// dialect: falkordb
// purpose: range index for the keyword statistics kept at write time (ADR 0016): one
//          (:GraphmemTerm) per namespace, field and term, and a namespace's
//          (:GraphmemKeywordStats)
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (t:GraphmemTerm) ON (t.namespace, t.field, t.term)
