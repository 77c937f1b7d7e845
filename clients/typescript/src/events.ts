/**
 * The live event stream (`GET /v1/events?namespace=...`) as an async iterable: fetch's body
 * read as server-sent events, reconnecting with `Last-Event-ID` after a dropped or silent
 * connection, so nothing inside the server's retained window is missed. The route is kept
 * out of the OpenAPI document (a generated client would read it to its end), so the event's
 * shape is written here, after `graphmem.engine.events.MemoryEvent.to_dict`.
 */
import { errorFrom, unreachable } from "./errors.js";
import { SseParser } from "./sse.js";

/**
 * An event's JSON as the server sends it. `type`: stored, reinforced, updated, deleted,
 * related, unrelated, pinned, unpinned, promoted, demoted, archived, expired, restored,
 * superseded, consolidation; and for one listener `missed` (a resume older than the retained
 * window) or `overflow` (events it was too slow to keep). Other fields: what else is known
 * (tier, status, a preview, the edge, the run).
 */
export interface MemoryEventData {
  id: string;
  type: string;
  namespace: string;
  /** ISO 8601 */
  at: string;
  memory_id: string | null;
  [field: string]: unknown;
}

/** One event: its SSE id and name, and its data. */
export interface MemoryEvent<T = MemoryEventData> {
  /** Pass it as `lastEventId` to resume after this event. */
  id: string | undefined;
  /** The SSE event name (the data's `type`). */
  type: string;
  /** The event's JSON (the raw text if it is not JSON). */
  data: T;
}

export interface EventStreamOptions {
  /** Resume after this event (sent as `Last-Event-ID`). */
  lastEventId?: string;
  /** Ends the stream (the iteration returns). */
  signal?: AbortSignal;
  /** Reconnect when the connection drops, resuming after the last event (default true). */
  reconnect?: boolean;
  /** Wait before a reconnect unless the server set `retry:` (default 1000 ms). */
  retryMs?: number;
  /** A connection silent this long is dead and is replaced (default 60 s; heartbeats are 15 s). */
  idleTimeoutMs?: number;
  /** Called each time the server accepted the stream: from then on no write is missed. */
  onOpen?: () => void;
}

const RETRY_STATUS = new Set([502, 503, 504]);

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}

function parsed(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

/** Events from `url` (headers: the key); a 4xx ends it with its typed error. */
export async function* readEvents<T = MemoryEventData>(
  url: string, headers: Record<string, string>, baseUrl: string, options: EventStreamOptions = {},
): AsyncGenerator<MemoryEvent<T>, void, undefined> {
  const reconnect = options.reconnect ?? true;
  const idleMs = options.idleTimeoutMs ?? 60_000;
  // closes the connection when the caller aborts and when it stops iterating
  const stop = new AbortController();
  const forward = (): void => stop.abort();
  options.signal?.addEventListener("abort", forward, { once: true });
  if (options.signal?.aborted) stop.abort();
  let lastEventId = options.lastEventId;
  let retryMs = options.retryMs ?? 1000;
  try {
    while (!stop.signal.aborted) {
      const conn = new AbortController();
      const closeConn = (): void => conn.abort();
      stop.signal.addEventListener("abort", closeConn, { once: true });
      let idle: ReturnType<typeof setTimeout> | undefined;
      const arm = (): void => {
        clearTimeout(idle);
        idle = setTimeout(closeConn, idleMs);
      };
      const parser = new SseParser();
      try {
        arm();
        let response: Response;
        try {
          response = await fetch(url, {
            headers: { ...headers, accept: "text/event-stream",
              ...(lastEventId !== undefined ? { "last-event-id": lastEventId } : {}) },
            signal: conn.signal,
          });
        } catch (err) {
          if (stop.signal.aborted) return;
          if (!reconnect) throw unreachable(baseUrl, err);
          await pause(retryMs, stop.signal);
          continue;
        }
        if (!response.ok) {
          if (reconnect && RETRY_STATUS.has(response.status)) {
            await response.body?.cancel();
            await pause(retryMs, stop.signal);
            continue;
          }
          throw await errorFrom(response);
        }
        if (!response.body) throw unreachable(baseUrl, new Error("the event stream has no body"));
        options.onOpen?.();
        const decoder = new TextDecoder();
        try {
          for await (const chunk of response.body) {
            arm();
            for (const event of parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }))) {
              lastEventId = event.id ?? lastEventId;
              // the caller's time with an event is not the server's silence
              clearTimeout(idle);
              yield { id: event.id, type: event.event, data: parsed(event.data) as T };
              arm();
            }
          }
        } catch (err) {
          if (stop.signal.aborted) return;
          if (!reconnect) throw unreachable(baseUrl, err);
        }
      } finally {
        clearTimeout(idle);
        stop.signal.removeEventListener("abort", closeConn);
        conn.abort();
      }
      lastEventId = parser.lastEventId ?? lastEventId;
      retryMs = parser.retryMs ?? retryMs;
      if (!reconnect) return;
      await pause(retryMs, stop.signal);
    }
  } finally {
    options.signal?.removeEventListener("abort", forward);
    stop.abort();
  }
}
