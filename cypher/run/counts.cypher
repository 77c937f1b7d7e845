// name: run/counts
// purpose: consolidation runs by status (for /metrics: no run's plan is read)
// parameters: none
// returns: status, n
// mode: read
MATCH (r:GraphmemRun)
RETURN r.status AS status, count(r) AS n
