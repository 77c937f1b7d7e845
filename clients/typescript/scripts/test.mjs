// npm test: start a real graphmem serve, regenerate src/schema.ts from its /openapi.json,
// compile the wrapper and the tests with tsc (a route or schema change fails here), run them
// with node's test runner against that server, stop it.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SCHEMA_FILE, writeSchema } from "./generate.mjs";
import { startServer } from "./server.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

function run(cmd, args, env = process.env) {
  const done = spawnSync(cmd, args, { cwd: ROOT, stdio: "inherit", env });
  if (done.error) throw done.error;
  return done.status ?? 1;
}

const server = await startServer({
  writer: ["ts-a", "writer"],
  reader: ["ts-a", "reader"],
  admin: ["*", "admin"],
});
// a test run stopped from outside (Ctrl+C, a CI timeout) still stops its server
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => { void server.stop().finally(() => process.exit(130)); });
}
let status = 1;
try {
  const before = existsSync(SCHEMA_FILE) ? readFileSync(SCHEMA_FILE, "utf8") : "";
  if ((await writeSchema(server.url)) !== before) {
    // not an error: the API changed and the client's types followed; the diff shows how
    process.stderr.write("note: src/schema.ts changed with the server's /openapi.json (commit it)\n");
  }
  status = run(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"]);
  if (status === 0) {
    const tests = readdirSync(join(ROOT, "dist/test")).filter((f) => f.endsWith(".test.js"))
      .sort().map((f) => join("dist/test", f));
    status = run(process.execPath, ["--test", "--test-concurrency=1", "--test-timeout=60000", ...tests], {
      ...process.env,
      GRAPHMEM_URL: server.url,
      GRAPHMEM_WRITER_KEY: server.keys.writer,
      GRAPHMEM_READER_KEY: server.keys.reader,
      GRAPHMEM_ADMIN_KEY: server.keys.admin,
    });
  }
} finally {
  if (status !== 0) process.stderr.write(`\n--- graphmem serve log (tail) ---\n${server.log().slice(-3000)}\n`);
  await server.stop();
}
process.exit(status);
