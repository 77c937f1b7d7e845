/**
 * The live event stream (`GET /v1/events?namespace=...`) as an async iterable: fetch's body
 * read as server-sent events, reconnecting with `Last-Event-ID` after a dropped connection.
 */
import { errorFrom, unreachable } from "./errors.js";
import { SseParser } from "./sse.js";

/** What happened to a memory (or a consolidation run), as the server sent it. */
export interface MemoryEvent<T = unknown> {
  /** The event's id: pass it as `lastEventId` to resume after it. */
  id: string | undefined;
  /** The SSE event name (e.g. `stored`, `updated`, `deleted`). */
  type: string;
  /** The event's JSON data (the raw text when it is not JSON). */
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
export async function* readEvents<T = unknown>(
  url: string, headers: Record<string, string>, baseUrl: string, options: EventStreamOptions = {},
): AsyncGenerator<MemoryEvent<T>, void, undefined> {
  const reconnect = options.reconnect ?? true;
  // one controller closes the connection both when the caller aborts and when it stops iterating
  const stop = new AbortController();
  const forward = (): void => stop.abort();
  options.signal?.addEventListener("abort", forward, { once: true });
  if (options.signal?.aborted) stop.abort();
  let lastEventId = options.lastEventId;
  let retryMs = options.retryMs ?? 1000;
  try {
    while (!stop.signal.aborted) {
      const parser = new SseParser();
      let response: Response;
      try {
        response = await fetch(url, {
          headers: { ...headers, accept: "text/event-stream",
            ...(lastEventId !== undefined ? { "last-event-id": lastEventId } : {}) },
          signal: stop.signal,
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
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body) {
          for (const event of parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }))) {
            lastEventId = event.id ?? lastEventId;
            yield { id: event.id, type: event.event, data: parsed(event.data) as T };
          }
        }
      } catch (err) {
        if (stop.signal.aborted) return;
        if (!reconnect) throw unreachable(baseUrl, err);
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
