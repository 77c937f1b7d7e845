// name: schema/index_status
// dialect: falkordb
// purpose: the state of every index (indexes build in the background: after a rebuild the
//          adapter waits until all are OPERATIONAL before it queries them)
// parameters: none
// returns: label, status
// mode: read
CALL db.indexes() YIELD label, status
RETURN label, status
