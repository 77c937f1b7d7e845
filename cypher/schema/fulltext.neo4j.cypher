// name: schema/fulltext
// dialect: neo4j
// purpose: full-text index over the pre-analysed keyword fields; the whitespace analyzer
//          keeps graphmem's own stems and stop-word removal
// parameters: none
// returns: nothing
// mode: schema
CREATE FULLTEXT INDEX memory_keywords IF NOT EXISTS
FOR (m:Memory) ON EACH [m.keywords, m.context_keywords]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'whitespace'}}
