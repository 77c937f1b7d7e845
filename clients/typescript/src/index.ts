export { GraphMemClient } from "./client.js";
export type {
  ClientOptions, ContextEntry, InNamespace, IndexEntry, Memory, MemoryItem, MemoryPatch, Relation, RelationType,
  SearchOptions, SearchResult, StoreOptions, Ttl,
} from "./client.js";
export {
  AuthError, ConflictError, ForbiddenError, GraphMemError, NotFoundError, RateLimitError,
  UnavailableError, ValidationError,
} from "./errors.js";
export type { EventStreamOptions, MemoryEvent, MemoryEventData } from "./events.js";
export { SseParser, type ServerSentEvent } from "./sse.js";
export type { components, operations, paths } from "./schema.js";
