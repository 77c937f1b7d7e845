// name: search/vector
// dialect: falkordb
// purpose: approximate nearest memories to a vector. The index is global and its vector nodes
//          append-only, so hits are joined to their memory (same namespace, current hash,
//          wanted statuses / tiers); the adapter widens the fetch while the index returned all
//          it was asked for but too few survived. FalkorDB's score is a cosine *distance*: similarity = 1 - score.
//          The matches come as two cells (ids joined by $sep, a newline no validated id holds;
//          the similarities as a JSON list), not a list of maps: FalkorDB's client builds
//          ~3 Python objects per returned value (ADR 0017).
// parameters: label (string: 'ContentVector' | 'ContextVector', from an allow-list), fetch (int), vector (list of float), namespace (string),
//             statuses (list of string), tiers (list of string | null), sep (string)
// returns: fetched (int): hits the index returned; n (int): matches; ids (string: the
//          matches' ids joined by sep); similarities (string: a JSON list of float)
// mode: read
CALL db.idx.vector.queryNodes($label, 'vector', $fetch, vecf32($vector)) YIELD node, score
WITH collect({v: node, score: score}) AS hits
WITH size(hits) AS fetched, hits
UNWIND (CASE WHEN fetched = 0 THEN [null] ELSE hits END) AS h
OPTIONAL MATCH (m:Memory {namespace: $namespace, id: h.v.id})
WHERE h.v.namespace = $namespace AND (m.vec_hash = h.v.hash OR m.ctx_hash = h.v.hash)
WITH fetched,
     collect(CASE WHEN m IS NOT NULL AND m.status IN $statuses
                       AND ($tiers IS NULL OR m.tier IN $tiers)
                  THEN [m.id, 1.0 - h.score] END) AS matches
RETURN fetched, size(matches) AS n, string.join([x IN matches | x[0]], $sep) AS ids,
       toJSON([x IN matches | x[1]]) AS similarities
