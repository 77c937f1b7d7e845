// name: schema/constraint_status
// dialect: falkordb
// purpose: the state of every constraint (they build in the background like indexes: the
//          adapter waits until all are OPERATIONAL before it writes)
// parameters: none
// returns: label, status
// mode: read
CALL db.constraints() YIELD label, status
RETURN label, status
