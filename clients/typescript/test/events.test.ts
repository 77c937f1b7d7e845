// GET /v1/events of a real graphmem serve: a write reaches a listener, a listener that went
// away resumes with Last-Event-ID and gets what it missed, and only its own namespace.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ForbiddenError, ValidationError, type MemoryEvent } from "../src/index.js";
import { NS, admin, freshNamespace, reader, writer } from "./helpers.js";

/** Events until `done` says so; the stream's own deadline (its signal) fails the test. */
async function collect(stream: AsyncGenerator<MemoryEvent>, done: (seen: MemoryEvent[]) => boolean,
): Promise<MemoryEvent[]> {
  const seen: MemoryEvent[] = [];
  for await (const event of stream) {
    seen.push(event);
    if (done(seen)) return seen;
  }
  assert.fail(`the stream ended after ${JSON.stringify(seen.map((e) => e.type))}`);
}

const deadline = (): AbortSignal => AbortSignal.timeout(20_000);

const about = (events: MemoryEvent[], ids: string[]): [string, string | null][] =>
  events.filter((e) => e.data.memory_id !== null && ids.includes(e.data.memory_id))
    .map((e) => [e.type, e.data.memory_id]);

test("a write reaches a listener; after a reconnect it gets what it missed, nothing else",
  { timeout: 60_000 }, async () => {
    const namespace = freshNamespace();
    const mem = admin(namespace);
    const elsewhere = admin(freshNamespace());

    let opened!: () => void;
    const open = new Promise<void>((resolve) => { opened = resolve; });
    const listener = mem.events({ onOpen: opened, signal: deadline() });
    const first = collect(listener, (seen) => seen.filter((e) => e.type === "stored").length === 2);
    await open;
    const a = await mem.store("The billing service pages on-call when invoices fail twice");
    await elsewhere.store("A memory of another namespace the listener must not see");
    const b = await mem.store("Grafana dashboards moved to the observability folder");
    const live = await first;  // leaving the loop closed the listener's connection
    assert.deepEqual(about(live, [a.id, b.id]), [["stored", a.id], ["stored", b.id]]);
    assert.ok(live.every((e) => e.data.namespace === namespace));
    const resumeFrom = live.at(-1)?.id;
    assert.ok(resumeFrom);

    // written while nobody listens
    const c = await mem.store("Kafka consumer lag alerts fire above ten thousand messages");
    await mem.update(a.id, { importance: 0.95 });
    await mem.delete(b.id);
    await elsewhere.store("Another write elsewhere");

    const resumed = await collect(mem.events({ lastEventId: resumeFrom, signal: deadline() }),
      (seen) => seen.some((e) => e.type === "deleted"));
    assert.deepEqual(about(resumed, [a.id, b.id, c.id]),
      [["stored", c.id], ["updated", a.id], ["deleted", b.id]]);
    assert.ok(resumed.every((e) => e.data.namespace === namespace));
    const before = new Set(live.map((e) => e.id));
    assert.ok(resumed.every((e) => !before.has(e.id)), "an event was delivered twice");
    assert.equal(resumed[0]?.data.id, resumed[0]?.id);
  });

test("the key's scope holds for the stream: another namespace is 403, a reader may listen",
  { timeout: 30_000 }, async () => {
    const other = freshNamespace();
    await assert.rejects(collect(writer().events({ namespace: other, signal: deadline() }), () => true),
      (err: unknown) => err instanceof ForbiddenError && err.status === 403
        && err.message.includes(other));

    let opened!: () => void;
    const open = new Promise<void>((resolve) => { opened = resolve; });
    const listening = collect(reader().events({ onOpen: opened, signal: deadline() }),
      (seen) => seen.some((e) => e.type === "stored"));
    await open;
    const written = await writer().store("Reader keys can follow the live events of their namespace");
    const event = (await listening).find((e) => e.type === "stored");
    assert.equal(event?.data.namespace, NS);
    assert.equal(event?.data.memory_id, written.id);
  });

test("a Last-Event-ID that is no event id is a 422 before the stream", async () => {
  await assert.rejects(collect(writer().events({ lastEventId: "not an id", signal: deadline() }), () => true),
    (err: unknown) => err instanceof ValidationError && err.status === 422);
});
