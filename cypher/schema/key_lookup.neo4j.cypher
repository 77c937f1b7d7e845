// name: schema/key_lookup
// dialect: neo4j
// purpose: one API key record per hash (a uniqueness constraint is also the lookup index)
// parameters: none
// returns: nothing
// mode: schema
CREATE CONSTRAINT key_hash IF NOT EXISTS FOR (k:GraphmemKey) REQUIRE k.hash IS UNIQUE
