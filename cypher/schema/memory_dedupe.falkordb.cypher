// name: schema/memory_dedupe
// dialect: falkordb
// purpose: the index the (namespace, dedupe_key) uniqueness constraint needs (created with
//          GRAPH.CONSTRAINT on top; dedupe_key is an active memory's content hash, absent
//          on the others, which the constraint ignores; issue 45)
// parameters: none
// returns: nothing
// mode: schema
CREATE INDEX FOR (m:Memory) ON (m.dedupe_key)
