// The event-stream format (HTML standard) read in chunks of any size, and a dropped
// connection resumed with Last-Event-ID.
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { GraphMemClient, SseParser, ValidationError, type ServerSentEvent } from "../src/index.js";

const STREAM = "\uFEFF: a comment\nretry: 250\n\nid: 1\nevent: stored\ndata: {\"a\":1}\n\n"
  + "data: line one\r\ndata:line two\r\n\r\nid: 7\rdata\r\rid\nevent: deleted\ndata: x\n\n"
  + "data: never dispatched without a blank line";

function parseAll(chunks: string[]): { events: ServerSentEvent[]; parser: SseParser } {
  const parser = new SseParser();
  return { events: chunks.flatMap((c) => parser.feed(c)), parser };
}

test("fields, multi-line data, CR/LF/CRLF, comments, BOM and retry", () => {
  const { events, parser } = parseAll([STREAM]);
  assert.deepEqual(events, [
    { id: "1", event: "stored", data: "{\"a\":1}" },
    { id: "1", event: "message", data: "line one\nline two" },
    { id: "7", event: "message", data: "" },
    { id: "", event: "deleted", data: "x" },
  ]);
  assert.equal(parser.retryMs, 250);
  assert.equal(parser.lastEventId, "");
});

test("the same events whatever the chunking, a CRLF split between chunks included", () => {
  const whole = parseAll([STREAM]).events;
  for (const size of [1, 2, 3, 5, 8, 13]) {
    const chunks: string[] = [];
    for (let i = 0; i < STREAM.length; i += size) chunks.push(STREAM.slice(i, i + size));
    assert.deepEqual(parseAll(chunks).events, whole, `chunks of ${size}`);
  }
  assert.deepEqual(parseAll(["data: a\r", "\n", "\r", "\n"]).events,
    [{ id: undefined, event: "message", data: "a" }]);
});

/**
 * A stand-in event source whose first connection, after two events, drops ("drop") or goes
 * silent ("silent"); a reconnect resumes after the Last-Event-ID it sends.
 */
async function droppingServer(mode: "drop" | "silent" = "drop"): Promise<{ url: string; seen: (string | undefined)[]; close: () => void }> {
  const seen: (string | undefined)[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const resumeFrom = req.headers["last-event-id"] as string | undefined;
    seen.push(resumeFrom);
    if (req.headers.authorization !== "Bearer k") {
      res.writeHead(422, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "invalid_request", message: "bad key here" } }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const from = resumeFrom === undefined ? 1 : Number(resumeFrom) + 1;
    res.write("retry: 10\n\n");
    const events = [from, from + 1].map((id) => `id: ${id}\nevent: stored\ndata: {"n":${id}}\n\n`);
    // the first connection drops mid-stream once its two events are on the wire
    res.write(events.join(""), () => { if (resumeFrom === undefined && mode === "drop") res.destroy(); });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => { server.closeAllConnections(); server.close(); } };
}

test("a dropped stream reconnects with Last-Event-ID and misses nothing", { timeout: 20_000 }, async () => {
  const source = await droppingServer();
  try {
    const mem = new GraphMemClient({ baseUrl: source.url, apiKey: "k", namespace: "ns" });
    const ids: (string | undefined)[] = [];
    for await (const event of mem.events<{ n: number }>({ retryMs: 10 })) {
      assert.equal(event.data.n, Number(event.id));
      ids.push(event.id);
      if (ids.length === 4) break;
    }
    assert.deepEqual(ids, ["1", "2", "3", "4"]);
    assert.deepEqual(source.seen, [undefined, "2"]);

    const refused = new GraphMemClient({ baseUrl: source.url, apiKey: "other", namespace: "ns" });
    await assert.rejects(async () => {
      for await (const _ of refused.events()) assert.fail("no event on a refused stream");
    }, (err: unknown) => err instanceof ValidationError && err.status === 422 && /bad key/.test(err.message));
  } finally {
    source.close();
  }
});

test("a silent stream is replaced after the idle timeout, resuming after the last event", { timeout: 20_000 }, async () => {
  const source = await droppingServer("silent");
  try {
    const mem = new GraphMemClient({ baseUrl: source.url, apiKey: "k", namespace: "ns" });
    const ids: (string | undefined)[] = [];
    for await (const event of mem.events({ retryMs: 10, idleTimeoutMs: 300 })) {
      ids.push(event.id);
      if (ids.length === 4) break;
    }
    assert.deepEqual(ids, ["1", "2", "3", "4"]);
    assert.deepEqual(source.seen, [undefined, "2"]);
  } finally {
    source.close();
  }
});

test("aborting the signal ends the iteration", { timeout: 20_000 }, async () => {
  const source = await droppingServer("silent");
  try {
    const mem = new GraphMemClient({ baseUrl: source.url, apiKey: "k", namespace: "ns" });
    const stop = new AbortController();
    const ids: (string | undefined)[] = [];
    for await (const event of mem.events({ signal: stop.signal, lastEventId: "10" })) {
      ids.push(event.id);
      if (ids.length === 2) stop.abort();
    }
    assert.deepEqual(ids, ["11", "12"]);
    assert.deepEqual(source.seen, ["10"]);
  } finally {
    source.close();
  }
});
