// Lints Neo4j-dialect Cypher files with Neo4j's own parser and semantic checks
// (@neo4j-cypher/language-support). Usage: node lint.mjs FILE... ; prints one JSON object
// {file: [messages]} and exits 1 when any file has an error. "Parameter ... is not defined"
// notes are dropped (isNotParamError): parameters are bound at run time.
import { readFileSync } from 'node:fs';
import { lintCypherQuery, isNotParamError } from '@neo4j-cypher/language-support';

const arg = (name, type) => ({ name, description: name, type, isDeprecated: false });
const proc = (name, args, returns) => ({
  name, description: name, mode: 'READ', worksOnSystem: false, admin: false,
  option: { deprecated: false }, signature: `${name}(...)`,
  argumentDescription: args, returnDescription: returns,
});
// The procedures graphmem calls, with Neo4j 5's signatures: a misspelt one fails the check.
const procedures = {
  'db.index.vector.queryNodes': proc('db.index.vector.queryNodes',
    [arg('indexName', 'STRING'), arg('numberOfNearestNeighbours', 'INTEGER'),
     arg('query', 'LIST<FLOAT>')],
    [arg('node', 'NODE'), arg('score', 'FLOAT')]),
  'db.index.fulltext.queryNodes': proc('db.index.fulltext.queryNodes',
    [arg('indexName', 'STRING'), arg('queryString', 'STRING'),
     { ...arg('options', 'MAP'), default: 'DefaultParameterValue{value={}, type=MAP}' }],
    [arg('node', 'NODE'), arg('score', 'FLOAT')]),
};
// ... and the built-in functions it uses (a misspelt or unknown one fails too).
const fn = (name, aggregating = false) => ({
  name, category: 'builtin', description: name, isBuiltIn: true, signature: `${name}(...)`,
  argumentDescription: [arg('input', 'ANY')], returnDescription: 'ANY', aggregating,
  isDeprecated: false,
});
const functions = Object.fromEntries([
  ...['count', 'collect', 'sum', 'avg', 'min', 'max'].map((n) => [n, fn(n, true)]),
  ...['type', 'size', 'coalesce', 'labels', 'id', 'elementId', 'startNode', 'endNode',
      'toString', 'toInteger', 'toFloat', 'round', 'substring', 'left', 'keys', 'nodes',
      'relationships', 'length', 'head', 'last', 'timestamp', 'exists', 'range',
      'vector.similarity.cosine'].map((n) => [n, fn(n)]),
]);
const dbSchema = {
  procedures: { 'CYPHER 5': procedures, 'CYPHER 25': procedures },
  functions: { 'CYPHER 5': functions, 'CYPHER 25': functions },
};

// Neo4j Browser commands (":param x => 1") are not Cypher: blank them, keep line numbers.
const strip = (text) => text.split('\n').map((l) => (l.trimStart().startsWith(':') ? '' : l)).join('\n');

const report = {};
let failed = false;
for (const file of process.argv.slice(2)) {
  const { diagnostics } = lintCypherQuery(strip(readFileSync(file, 'utf8')), dbSchema);
  const errors = diagnostics.filter((d) => d.severity === 1 && isNotParamError(d));
  if (errors.length) {
    failed = true;
    report[file] = errors.map((d) => `${d.range.start.line + 1}:${d.range.start.character + 1} ${d.message}`);
  }
}
console.log(JSON.stringify(report));
process.exit(failed ? 1 : 0);
