// A refused call is a typed error carrying the status, code and message; it changes nothing,
// and a key reaches only its own namespaces with its own role.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  AuthError, ForbiddenError, GraphMemClient, GraphMemError, NotFoundError, UnavailableError,
  ValidationError,
} from "../src/index.js";
import { NS, BASE_URL, admin, freshNamespace, reader, writer } from "./helpers.js";

async function refused(call: Promise<unknown>): Promise<GraphMemError> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof GraphMemError, `not a GraphMemError: ${String(err)}`);
    return err;
  }
  assert.fail("the call succeeded");
}

test("a 422 is a ValidationError with status, code and message, and writes nothing", async () => {
  const target = freshNamespace();
  const mem = admin(target);
  const err = await refused(mem.store("   "));
  assert.ok(err instanceof ValidationError);
  assert.equal(err.status, 422);
  assert.equal(err.code, "invalid_content");
  assert.match(err.message, /content/);
  const unknown = await refused(mem.store("fine", { bogus: 1 } as never));
  assert.equal(unknown.status, 422);
  assert.match(unknown.message, /bogus/);
  // a batch is all or none: one bad item writes none of the good ones
  const batch = await refused(mem.storeMany([{ content: "good" }, { content: "" }]));
  assert.ok(batch instanceof ValidationError);
  assert.equal((await mem.stats()).memories, 0);
});

test("a missing memory is a NotFoundError (404)", async () => {
  const err = await refused(writer().get("no-such-memory"));
  assert.ok(err instanceof NotFoundError);
  assert.equal(err.status, 404);
  assert.equal(err.code, "not_found");
  assert.match(err.message, /no-such-memory/);
});

test("a key's scope holds: another namespace and a reader's write are 403", async () => {
  const other = freshNamespace();
  const outside = await refused(writer().store("not mine to write", { namespace: other }));
  assert.ok(outside instanceof ForbiddenError && outside instanceof AuthError);
  assert.equal(outside.status, 403);
  assert.match(outside.message, new RegExp(other));
  await assert.rejects(writer().retrieve("anything", { namespace: other }), ForbiddenError);
  assert.equal((await admin(other).stats()).memories, 0);

  const before = (await reader().stats()).memories;
  const readOnly = await refused(reader().store("a reader may not write"));
  assert.ok(readOnly instanceof ForbiddenError);
  assert.match(readOnly.message, /writer/);
  assert.equal((await reader().stats()).memories, before);
  assert.ok(Array.isArray(await reader().retrieve("deploy", { namespace: NS })));
});

test("no key or a wrong key is an AuthError (401)", async () => {
  const none = await refused(new GraphMemClient({ baseUrl: BASE_URL, namespace: NS }).stats());
  assert.equal(none.constructor, AuthError);
  assert.equal(none.status, 401);
  const wrong = await refused(new GraphMemClient({ baseUrl: BASE_URL, apiKey: "gm_nope_0_x", namespace: NS }).stats());
  assert.equal(wrong.status, 401);
});

test("a server that is not there is an UnavailableError (status 0)", async () => {
  const gone = new GraphMemClient({ baseUrl: "http://127.0.0.1:9", apiKey: "k", namespace: NS });
  const err = await refused(gone.stats());
  assert.ok(err instanceof UnavailableError);
  assert.equal(err.status, 0);
});

test("a call without a namespace is refused before it is sent", async () => {
  const mem = new GraphMemClient({ baseUrl: BASE_URL, apiKey: "k" });
  await assert.rejects(mem.stats(), TypeError);
});
