// Session context over REST: keys with a TTL and the capped recent messages, scoped by the key.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { ForbiddenError, ValidationError } from "../src/index.js";
import { admin, freshNamespace, reader, writer } from "./helpers.js";

const session = (): string => `chat-${randomUUID().slice(0, 8)}`;

test("context keys: set, get, list, expiry by ttl, delete one and all", async () => {
  const mem = writer();
  const chat = session();
  const plan = await mem.contextSet(chat, "plan", { step: 2, files: ["a.py"] }, { ttl: 600 });
  const mood = await mem.contextSet(chat, "mood", "focused", { ttl: 60 });
  assert.deepEqual(plan.value, { step: 2, files: ["a.py"] });
  // each expires ttl seconds after its write: the two writes are moments apart
  const apart = (Date.parse(plan.expires_at) - Date.parse(mood.expires_at)) / 1000;
  assert.ok(apart > 480 && apart <= 540, `expiries ${apart} s apart`);

  assert.deepEqual(await mem.contextGet(chat, "plan"), { step: 2, files: ["a.py"] });
  assert.equal(await mem.contextGet(chat, "nothing"), undefined);
  assert.deepEqual(await mem.contextList(chat), { plan: { step: 2, files: ["a.py"] }, mood: "focused" });
  assert.equal((await mem.contextEntry(chat, "mood"))?.expires_at, mood.expires_at);

  await mem.contextSet(chat, "plan", { step: 3 });
  assert.deepEqual(await mem.contextGet(chat, "plan"), { step: 3 });
  assert.equal(await mem.contextDelete(chat, "mood"), 1);
  assert.equal(await mem.contextDelete(chat, "mood"), 0);
  assert.deepEqual(Object.keys(await mem.contextList(chat)), ["plan"]);
  assert.equal(await mem.contextDelete(chat), 1);
  assert.deepEqual(await mem.contextList(chat), {});
});

test("recent messages: oldest first, limit, capped at the newest 50, cleared", async () => {
  const mem = admin(freshNamespace());
  const chat = session();
  for (let i = 0; i < 53; i++) await mem.messageAdd(chat, { role: "user", content: `message ${i}` });
  const kept = (await mem.messages(chat)) as { content: string }[];
  assert.equal(kept.length, 50);
  assert.equal(kept[0]?.content, "message 3");
  assert.equal(kept.at(-1)?.content, "message 52");
  const newest = (await mem.messages(chat, { limit: 2 })) as { content: string }[];
  assert.deepEqual(newest.map((m) => m.content), ["message 51", "message 52"]);
  assert.equal(await mem.messagesClear(chat), 50);
  assert.deepEqual(await mem.messages(chat), []);
});

test("bad input is a 422 and the key's scope holds; nothing is written", async () => {
  const mem = writer();
  const chat = session();
  await assert.rejects(mem.contextSet(chat, "has space", 1), ValidationError);
  await assert.rejects(mem.contextSet(chat, "plan", 1, { ttl: -5 }),
    (err: unknown) => err instanceof ValidationError && err.status === 422 && /ttl/.test(err.message));
  const other = freshNamespace();
  await assert.rejects(mem.contextSet(chat, "plan", 1, { namespace: other }), ForbiddenError);
  await assert.rejects(reader().contextSet(chat, "plan", 1),
    (err: unknown) => err instanceof ForbiddenError && /writer/.test(err.message));
  await assert.rejects(reader().messageAdd(chat, "hi"), ForbiddenError);
  assert.deepEqual(await reader().contextList(chat), {});
  assert.deepEqual(await admin(other).contextList(chat), {});
});
