// name: memory/reserve_seq
// purpose: reserve a block of insertion sequence numbers for a namespace (ties in time are
//          ordered by insertion, as SQLite orders them by rowid); a failed write leaves a gap
// parameters: namespace (string), count (int)
// returns: last (int): the block is last - count + 1 .. last
// mode: write
MERGE (c:GraphmemCounter {namespace: $namespace})
ON CREATE SET c.seq = 0
SET c.seq = c.seq + $count
RETURN c.seq AS last
