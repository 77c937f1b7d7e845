// name: browser/neighbourhood
// purpose: a memory and everything within two typed hops of it (CAUSES, REFERENCES,
//          SIMILAR_TO, CONTRADICTS, SUMMARIZES, FOLLOWS) - renders as a graph in the Browser
// parameters: namespace (string), id (string: the memory's id, e.g. from `graphmem search`)
// returns: path (up to 100)
// mode: read
:param namespace => 'demo'
:param id => '00000000-0000-0000-0000-000000000000'

MATCH path = (m:Memory {namespace: $namespace, id: $id})-[*1..2]-(other:Memory)
RETURN path
LIMIT 100
