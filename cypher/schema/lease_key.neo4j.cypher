// name: schema/lease_key
// dialect: neo4j
// purpose: one lease node per name: without it two processes taking a free lease at once
//          (lease/acquire's MERGE) each created one and both held it
// parameters: none
// returns: nothing
// mode: schema
CREATE CONSTRAINT lease_name IF NOT EXISTS FOR (l:GraphmemLease) REQUIRE l.name IS UNIQUE
