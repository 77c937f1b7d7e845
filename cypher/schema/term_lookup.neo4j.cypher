// name: schema/term_lookup
// dialect: neo4j
// purpose: range index for the keyword statistics kept at write time (ADR 0016): one
//          (:GraphmemTerm) per namespace, field and term
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX term_lookup IF NOT EXISTS
FOR (t:GraphmemTerm) ON (t.namespace, t.field, t.term)
