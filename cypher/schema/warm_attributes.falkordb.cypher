// name: schema/warm_attributes
// dialect: falkordb
// purpose: register every property name the write path uses before any write can fail:
//          FalkorDB undoes a failed write (a create another writer won, issue 45) by
//          dropping the property names it introduced, and on a fresh graph those are the
//          names the winner's nodes use too (seen: a memory left without its kind). One
//          throw-away node of a label nothing reads; property names are graph-wide.
// parameters: props (map: every property name, each to 0)
// returns: done (1)
// mode: write
CREATE (x:GraphmemWarmup)
SET x += $props
DELETE x
RETURN 1 AS done
