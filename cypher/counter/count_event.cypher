// name: counter/count_event
// purpose: count one event against a key's window in a namespace (the tool-capture cap,
//          shared by every process and replica of the database): admitted while the window
//          holds fewer than limit events; a window opens with the first event after the last
//          one ended. One statement: on Neo4j the first SET takes the node's write lock
//          before its count is read (no lost update; the MERGE is unique by the
//          event_window_key constraint), FalkorDB runs one query at a time
// parameters: namespace (string), key (string), limit (int), window (float, seconds),
//             now (float, POSIX seconds)
// returns: admitted (boolean): the event was counted
// mode: write
MERGE (w:GraphmemWindow {namespace: $namespace, key: $key})
ON CREATE SET w.started_at = $now, w.n = 0
SET w.seen_at = $now
WITH w, w.started_at <= $now - $window AS lapsed
WITH w, lapsed, lapsed OR w.n < $limit AS admitted
SET w.started_at = CASE WHEN lapsed THEN $now ELSE w.started_at END,
    w.n = CASE WHEN lapsed THEN 1 WHEN admitted THEN w.n + 1 ELSE w.n END
RETURN admitted
