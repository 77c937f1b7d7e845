// name: browser/consolidation_lineage
// purpose: what a consolidation run summarised: each summary node and the (archived)
//          members it stands for; run_id null shows every run's summaries
// parameters: namespace (string), run_id (string | null)
// returns: summary, members (ids, statuses, previews), size
// mode: read
:param namespace => 'demo'
:param run_id => null

MATCH (s:Memory {namespace: $namespace, kind: 'summary'})-[:SUMMARIZES]->(m:Memory)
WHERE $run_id IS NULL OR s.metadata CONTAINS $run_id
RETURN s.content AS summary, s.id AS summary_id,
       collect({id: m.id, status: m.status, preview: left(m.content, 80)}) AS members,
       count(m) AS size
ORDER BY size DESC
LIMIT 25
