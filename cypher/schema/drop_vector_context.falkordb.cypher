// name: schema/drop_vector_context
// dialect: falkordb
// purpose: drop the (:ContextVector) vector index so that it can be rebuilt from the remaining
//          nodes after a vacuum (a fresh build restores the hits deletes cost, ADR 0003)
// parameters: none
// returns: nothing
// mode: schema
DROP VECTOR INDEX FOR (v:ContextVector) ON (v.vector)
