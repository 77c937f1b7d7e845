// The types come from the server's document: a path, a field or a parameter it does not have
// fails to compile (each @ts-expect-error below must be an error, or tsc fails the run).
import assert from "node:assert/strict";
import { test } from "node:test";
import { GraphMemClient, type Memory, type SearchOptions } from "../src/index.js";

function typeChecks(mem: GraphMemClient): void {
  // @ts-expect-error: no such route
  void mem.request("get", "/v1/nothing-here", {});
  // @ts-expect-error: the route has no PUT
  void mem.request("put", "/v1/memories/{memory_id}", {});
  // @ts-expect-error: GET /v1/stats needs its namespace
  void mem.request("get", "/v1/stats", {});
  // @ts-expect-error: a tier is one of four names
  void mem.store("x", { tier: "lukewarm" });
  // @ts-expect-error: the relation types are CAUSES, REFERENCES, SIMILAR_TO, CONTRADICTS
  void mem.relate("a", "b", "LIKES");
  // @ts-expect-error: a memory has no such field
  const nope = ({} as Memory).no_such_field;
  void nope;
  const options: SearchOptions = { limit: 3, strategy: "comprehensive", explain: false };
  void options;
}

test("the typed calls compile (the checks are in tsc, run before the tests)", () => {
  assert.equal(typeof typeChecks, "function");
});
