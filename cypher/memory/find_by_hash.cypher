// name: memory/find_by_hash
// purpose: active memories with one of the given content hashes (exact-duplicate detection)
// parameters: namespace (string), hashes (list of string)
// returns: content_hash, id (first inserted first)
// mode: read
MATCH (m:Memory {namespace: $namespace})
WHERE m.content_hash IN $hashes AND m.status = 'active'
RETURN m.content_hash AS content_hash, m.id AS id
ORDER BY m.seq
