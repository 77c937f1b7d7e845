// The main verbs against a real graphmem serve: what is written is read, found and changed.
import assert from "node:assert/strict";
import { test } from "node:test";
import { NotFoundError } from "../src/index.js";
import { NS, admin, freshNamespace, writer } from "./helpers.js";

test("a stored memory is found by search, first, with its terms and path", async () => {
  const mem = writer();
  const kept = await mem.store("The nightly deploy failed because the migration locked the users table",
    { importance: 0.8, metadata: { team: "platform" } });
  await mem.store("Lunch on Friday is pizza in the big meeting room");
  assert.equal(kept.namespace, NS);
  assert.equal(kept.importance, 0.8);
  assert.deepEqual(kept.metadata, { team: "platform" });

  const hits = await mem.retrieve("why did the deploy fail?", { limit: 5 });
  assert.equal(hits[0]?.memory.id, kept.id);
  assert.ok(hits[0].score > 0);
  assert.ok((hits[0].terms?.semantic ?? 0) > 0);
  assert.deepEqual(hits[0].path?.nodes, [kept.id]);

  const index = await mem.searchIndex("users table migration", { limit: 3 });
  assert.equal(index[0]?.id, kept.id);
  assert.ok(index[0].token_estimate > 0);
  assert.match(index[0].preview, /migration/);
});

test("store many, get, update, relate, delete", async () => {
  const mem = admin(freshNamespace());
  const [cause, effect] = await mem.storeMany([
    { content: "The disk on db-2 filled up overnight" },
    { content: "Writes to the orders table timed out at 03:10", topic: "incident" },
  ]);
  assert.ok(cause && effect);
  assert.equal(effect.topic, "incident");
  assert.equal((await mem.get(cause.id)).content, "The disk on db-2 filled up overnight");

  const changed = await mem.update(cause.id, { content: "The disk on db-2 filled up at 02:50", importance: 0.9 });
  assert.equal(changed.content, "The disk on db-2 filled up at 02:50");
  assert.equal((await mem.get(cause.id)).importance, 0.9);

  const edge = await mem.relate(cause.id, effect.id, "CAUSES", { score: 0.7 });
  assert.deepEqual([edge.source_id, edge.target_id, edge.type], [cause.id, effect.id, "CAUSES"]);
  const edges = await mem.relations(effect.id);
  assert.ok(edges.some((e) => e.source_id === cause.id && e.type === "CAUSES"));

  const stats = await mem.stats();
  assert.equal(stats.memories, 2);
  assert.equal((stats.edges as Record<string, number>).CAUSES, 1);

  await mem.delete(effect.id);
  await assert.rejects(mem.get(effect.id), NotFoundError);
  assert.equal((await mem.stats()).memories, 1);
});

test("request reaches any route, typed by its path", async () => {
  const mem = writer();
  const me = await mem.request("get", "/v1/whoami", {});
  assert.equal(me.role, "writer");
  assert.deepEqual(me.namespaces, [NS]);
});
