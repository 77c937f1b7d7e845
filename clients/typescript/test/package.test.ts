// What a user installs: the package's own entry (package.json "exports") resolves, and the
// built declarations - the generated schema's among them - type-check in a consumer's build.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const CONSUMER = `import { GraphMemClient, NotFoundError, type Memory, type paths } from "@graphmem/client";
const mem = new GraphMemClient({ baseUrl: "http://127.0.0.1:8765", namespace: "ops" });
export async function use(): Promise<string> {
  const m: Memory = await mem.store("x", { importance: 0.5 });
  const route: keyof paths = "/v1/search";
  try { await mem.get(m.id); } catch (err) { if (err instanceof NotFoundError) return err.code; }
  return route;
}
`;

test("the built package type-checks in a consumer (declarations included)", { timeout: 60_000 }, () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { name: string };
  // the consumer resolves the package by its name through a node_modules link to this folder
  const dir = mkdtempSync(join(ROOT, "dist", "consumer-"));
  try {
    writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
    mkdirSync(dirname(join(dir, "node_modules", pkg.name)), { recursive: true });
    symlinkSync(ROOT, join(dir, "node_modules", pkg.name), "dir");
    writeFileSync(join(dir, "consumer.ts"), CONSUMER);
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const done = spawnSync(process.execPath, [tsc, "--noEmit", "--strict", "--target", "ES2022",
      "--module", "NodeNext", "--moduleResolution", "NodeNext", "--types", "node",
      "--typeRoots", join(ROOT, "node_modules", "@types"), "consumer.ts"], { cwd: dir, encoding: "utf8" });
    assert.equal(done.status, 0, `${done.stdout}${done.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the package's entry point loads", async () => {
  const mod = await import(join(ROOT, "dist", "src", "index.js"));
  assert.equal(typeof mod.GraphMemClient, "function");
  assert.equal(typeof mod.GraphMemError, "function");
});
