// name: context/purge
// purpose: delete the session context expired at now (maintenance): context entries,
//          messages, and message logs whose last message expired, of one namespace or
//          (namespace null) all
// parameters: namespace (string|null), now (float, POSIX seconds)
// returns: entries (int), messages (int), logs (int)
// mode: write
OPTIONAL MATCH (c:GraphmemContext)
WHERE c.expires_at <= $now AND ($namespace IS NULL OR c.namespace = $namespace)
DELETE c
WITH count(c) AS entries
OPTIONAL MATCH (m:GraphmemMessage)
WHERE m.expires_at <= $now AND ($namespace IS NULL OR m.namespace = $namespace)
DELETE m
WITH entries, count(m) AS messages
OPTIONAL MATCH (ml:GraphmemMessageLog)
WHERE ml.expires_at <= $now AND ($namespace IS NULL OR ml.namespace = $namespace)
DELETE ml
RETURN entries, messages, count(ml) AS logs
