// name: schema/ping
// purpose: a real round trip to the database (readiness)
// parameters: none
// returns: ok (1)
// mode: read
RETURN 1 AS ok
