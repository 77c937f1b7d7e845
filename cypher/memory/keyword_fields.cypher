// name: memory/keyword_fields
// purpose: the analysed keyword fields of the given memories (any status), which retrieval
//          ranks itself with BM25 after the full-text index found them (ADR 0007)
// parameters: namespace (string), ids (list of string)
// returns: id, keywords, context_keywords
// mode: read
MATCH (m:Memory {namespace: $namespace})
WHERE m.id IN $ids
RETURN m.id AS id, m.keywords AS keywords, m.context_keywords AS context_keywords
