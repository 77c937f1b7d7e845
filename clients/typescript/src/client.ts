/**
 * `GraphMemClient`: graphmem's REST API from TypeScript. The main verbs by name, every other
 * route through `request` - all typed from the server's OpenAPI document (src/schema.ts).
 *
 * @example
 * const mem = new GraphMemClient({ baseUrl: "http://127.0.0.1:8765", apiKey, namespace: "ops" });
 * await mem.store("The deploy failed: the migration locked the users table");
 * const hits = await mem.retrieve("why did the deploy fail?");
 */
import { NotFoundError, errorFrom, unreachable } from "./errors.js";
import {
  readEvents, type EventStreamOptions, type MemoryEvent, type MemoryEventData,
} from "./events.js";
import {
  fillPath, queryString, type Answer, type Method, type Operation, type Path, type RequestParts,
} from "./operations.js";
import type { components } from "./schema.js";

type Schemas = components["schemas"];
export type Memory = Schemas["MemoryOut"];
export type SearchResult = Schemas["ResultOut"];
export type IndexEntry = Schemas["IndexEntryOut"];
export type Relation = Schemas["RelationOut"];
export type RelationType = Schemas["RelationCreate"]["type"];
export type MemoryItem = Schemas["MemoryItem"];
export type MemoryPatch = Schemas["MemoryPatch"];
export type ContextEntry = Schemas["ContextEntryOut"];
/** Seconds until a context value or message expires (default: the server's, one hour). */
export type Ttl = { ttl?: number };

/** Every verb's namespace: the call's own, else the client's default. */
export interface InNamespace {
  namespace?: string;
}
export type StoreOptions = Omit<Schemas["MemoryCreate"], "namespace" | "content"> & InNamespace;
export type SearchOptions = Omit<Schemas["SearchIn"], "namespace" | "query"> & InNamespace;

export interface ClientOptions {
  /** e.g. `http://127.0.0.1:8765` (a trailing slash is fine). */
  baseUrl: string;
  /** A key from `graphmem keys create`; none for a `--dev-no-auth` server. */
  apiKey?: string;
  /** The namespace a call uses when it names none. */
  namespace?: string;
  /** Headers sent with every call. */
  headers?: Record<string, string>;
}

export class GraphMemClient {
  readonly baseUrl: string;
  readonly namespace: string | undefined;
  private readonly headers: Record<string, string>;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.namespace = options.namespace;
    this.headers = { ...options.headers };
    if (options.apiKey) this.headers.authorization = `Bearer ${options.apiKey}`;
  }

  /** Any route, typed by its path and method; a failure is a `GraphMemError` subclass. */
  async request<P extends Path, M extends Method>(
    method: M, path: P, parts: RequestParts<Operation<P, M>>,
  ): Promise<Answer<Operation<P, M>>> {
    const { path: params, query, body, signal, headers } = parts as {
      path?: Record<string, unknown>; query?: Record<string, unknown>; body?: unknown;
      signal?: AbortSignal; headers?: Record<string, string>;
    };
    const url = `${this.baseUrl}${fillPath(path, params)}${queryString(query)}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: method.toUpperCase(),
        headers: { ...this.headers, ...headers,
          ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw unreachable(this.baseUrl, err);
    }
    if (!response.ok) throw await errorFrom(response);
    if (response.status === 204) return undefined as Answer<Operation<P, M>>;
    return (await response.json()) as Answer<Operation<P, M>>;
  }

  private ns(options?: InNamespace): string {
    const namespace = options?.namespace ?? this.namespace;
    if (!namespace) throw new TypeError("no namespace: pass { namespace } or set one on the client");
    return namespace;
  }

  /** Stores one memory (201). */
  async store(content: string, options: StoreOptions = {}): Promise<Memory> {
    const { namespace: _, ...fields } = options;
    const out = await this.request("post", "/v1/memories",
      { body: { ...fields, content, namespace: this.ns(options) } });
    return out as Memory;
  }

  /** Stores up to 1000 memories, all or none; in the items' order. */
  async storeMany(items: MemoryItem[], options: InNamespace = {}): Promise<Memory[]> {
    const out = await this.request("post", "/v1/memories",
      { body: { items, namespace: this.ns(options) } });
    return Array.isArray(out) ? out : [out];
  }

  async get(id: string, options: InNamespace = {}): Promise<Memory> {
    return this.request("get", "/v1/memories/{memory_id}",
      { path: { memory_id: id }, query: { namespace: this.ns(options) } });
  }

  /** Changes the fields given (content re-embeds it). */
  async update(id: string, fields: MemoryPatch, options: InNamespace = {}): Promise<Memory> {
    return this.request("patch", "/v1/memories/{memory_id}",
      { path: { memory_id: id }, query: { namespace: this.ns(options) }, body: fields });
  }

  async delete(id: string, options: InNamespace = {}): Promise<void> {
    await this.request("delete", "/v1/memories/{memory_id}",
      { path: { memory_id: id }, query: { namespace: this.ns(options) } });
  }

  /** The memories that answer `query`, best first, with score terms and paths. */
  async retrieve(query: string, options: SearchOptions = {}): Promise<SearchResult[]> {
    const { namespace: _, ...rest } = options;
    return this.request("post", "/v1/search",
      { body: { ...rest, query, namespace: this.ns(options) } });
  }

  /** `retrieve` by the route's name. */
  search(query: string, options: SearchOptions = {}): Promise<SearchResult[]> {
    return this.retrieve(query, options);
  }

  /** Compact previews (id, preview, score, token estimate); records no access. */
  async searchIndex(query: string, options: SearchOptions = {}): Promise<IndexEntry[]> {
    const { namespace: _, ...rest } = options;
    return this.request("post", "/v1/search/index",
      { body: { ...rest, query, namespace: this.ns(options) } });
  }

  /** A typed edge between two memories of the namespace. */
  async relate(sourceId: string, targetId: string, type: RelationType,
    options: InNamespace & { score?: number } = {}): Promise<Relation> {
    return this.request("post", "/v1/relations", {
      body: { source_id: sourceId, target_id: targetId, type, score: options.score,
        namespace: this.ns(options) },
    });
  }

  async relations(id: string, options: InNamespace = {}): Promise<Relation[]> {
    return this.request("get", "/v1/memories/{memory_id}/relations",
      { path: { memory_id: id }, query: { namespace: this.ns(options) } });
  }

  async stats(options: InNamespace = {}): Promise<Record<string, unknown>> {
    return this.request("get", "/v1/stats", { query: { namespace: this.ns(options) } });
  }

  /** Sets (or replaces) one key of a session's short-term context; it expires after `ttl` s. */
  async contextSet(sessionId: string, key: string, value: unknown,
    options: InNamespace & Ttl = {}): Promise<ContextEntry> {
    return this.request("put", "/v1/sessions/{session_id}/context/{key}", {
      path: { session_id: sessionId, key }, query: { namespace: this.ns(options) },
      body: { value, ttl: options.ttl },
    });
  }

  /** One key with its expiry; undefined when it is missing or expired. */
  async contextEntry(sessionId: string, key: string, options: InNamespace = {}
  ): Promise<ContextEntry | undefined> {
    try {
      return await this.request("get", "/v1/sessions/{session_id}/context/{key}",
        { path: { session_id: sessionId, key }, query: { namespace: this.ns(options) } });
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }

  /** One key's value; undefined when it is missing or expired. */
  async contextGet(sessionId: string, key: string, options: InNamespace = {}): Promise<unknown> {
    return (await this.contextEntry(sessionId, key, options))?.value;
  }

  /** Every unexpired key of the session, with its expiry. */
  async contextEntries(sessionId: string, options: InNamespace = {}): Promise<ContextEntry[]> {
    const out = await this.request("get", "/v1/sessions/{session_id}/context",
      { path: { session_id: sessionId }, query: { namespace: this.ns(options) } });
    return out.entries;
  }

  /** Every unexpired key of the session, by key. */
  async contextList(sessionId: string, options: InNamespace = {}): Promise<Record<string, unknown>> {
    const entries = await this.contextEntries(sessionId, options);
    return Object.fromEntries(entries.map((e) => [e.key, e.value]));
  }

  /** Deletes one key, or (no key) the session's whole context; how many were removed. */
  async contextDelete(sessionId: string, key?: string, options: InNamespace = {}): Promise<number> {
    const query = { namespace: this.ns(options) };
    const out = key === undefined
      ? await this.request("delete", "/v1/sessions/{session_id}/context",
        { path: { session_id: sessionId }, query })
      : await this.request("delete", "/v1/sessions/{session_id}/context/{key}",
        { path: { session_id: sessionId, key }, query });
    return out.deleted;
  }

  /** Appends to the session's recent messages (the newest 50 are kept); when it expires. */
  async messageAdd(sessionId: string, message: unknown, options: InNamespace & Ttl = {}
  ): Promise<string> {
    const out = await this.request("post", "/v1/sessions/{session_id}/messages", {
      path: { session_id: sessionId }, query: { namespace: this.ns(options) },
      body: { message, ttl: options.ttl },
    });
    return out.expires_at;
  }

  /** The session's unexpired messages, oldest first (`limit`: only the newest). */
  async messages(sessionId: string, options: InNamespace & { limit?: number } = {}
  ): Promise<unknown[]> {
    const out = await this.request("get", "/v1/sessions/{session_id}/messages", {
      path: { session_id: sessionId }, query: { namespace: this.ns(options), limit: options.limit },
    });
    return out.messages;
  }

  /** Deletes every message of the session; how many there were. */
  async messagesClear(sessionId: string, options: InNamespace = {}): Promise<number> {
    const out = await this.request("delete", "/v1/sessions/{session_id}/messages",
      { path: { session_id: sessionId }, query: { namespace: this.ns(options) } });
    return out.deleted;
  }

  /**
   * What happens to the namespace's memories, live (`GET /v1/events`); iterate it with
   * `for await`, leave the loop or abort `signal` to close it.
   */
  events<T = MemoryEventData>(
    options: InNamespace & EventStreamOptions = {},
  ): AsyncGenerator<MemoryEvent<T>, void, undefined> {
    const url = `${this.baseUrl}/v1/events${queryString({ namespace: this.ns(options) })}`;
    return readEvents<T>(url, this.headers, this.baseUrl, options);
  }
}
