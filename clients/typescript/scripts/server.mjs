// A real `graphmem serve` for the test run: a temporary data folder, keys made with the
// CLI, a free port, ready when /healthz answers; stop() ends it and removes the folder.
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));

/** GRAPHMEM_BIN, else the project's virtual environment, else the active one's (PATH). */
export function graphmemBin() {
  if (process.env.GRAPHMEM_BIN) return process.env.GRAPHMEM_BIN;
  const venv = resolve(HERE, "../../../.venv/bin/graphmem");
  return existsSync(venv) ? venv : "graphmem";
}

function freePort() {
  return new Promise((ok, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => ok(port));
    });
  });
}

/**
 * The environment of the CLI and the server: the caller's, without its GRAPHMEM_* settings
 * (a dev-no-auth or a keys file of the caller's would change what the tests see).
 */
function hermeticEnv() {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("GRAPHMEM_")));
  // no scheduled maintenance: nothing moves under the tests but what they do
  return { ...env, GRAPHMEM_SCHEDULER: "false", HF_HUB_OFFLINE: "1", TRANSFORMERS_OFFLINE: "1" };
}

/** A key as `graphmem keys create` prints it: the last word of its output. */
function createKey(bin, data, namespace, role) {
  const out = execFileSync(bin, ["keys", "create", "--data", data, "--namespace", namespace,
    "--role", role], { encoding: "utf8", env: hermeticEnv() });
  return out.trim().split(/\s+/).at(-1);
}

async function waitHealthy(url, proc, logPath, seconds = 120) {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    if (proc.exitCode !== null) {
      throw new Error(`graphmem serve exited (${proc.exitCode}):\n${readFileSync(logPath, "utf8").slice(-3000)}`);
    }
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`graphmem serve at ${url} did not answer /healthz`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Starts the server with the given keys ({name: [namespace, role]}); resolves to
 * {url, keys: {name: key}, stop()}.
 */
export async function startServer(keySpecs) {
  const bin = graphmemBin();
  const root = mkdtempSync(join(tmpdir(), "graphmem-ts-"));
  const data = join(root, "data");
  const keys = {};
  for (const [name, [namespace, role]] of Object.entries(keySpecs)) {
    keys[name] = createKey(bin, data, namespace, role);
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const logPath = join(root, "serve.log");
  const log = openSync(logPath, "w");
  const proc = spawn(bin, ["serve", "--data", data, "--host", "127.0.0.1", "--port", String(port)],
    { env: hermeticEnv(), stdio: ["ignore", log, log] });
  const exited = new Promise((r) => proc.once("exit", r));
  const stop = async () => {
    if (proc.exitCode === null) {
      proc.kill("SIGTERM");
      const killer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(root, { recursive: true, force: true });
  };
  try {
    await waitHealthy(url, proc, logPath);
  } catch (err) {
    await stop();
    throw err;
  }
  return { url, keys, stop, log: () => readFileSync(logPath, "utf8") };
}
