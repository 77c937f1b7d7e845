// The server the test run started (scripts/test.mjs): its URL and keys come in the environment.
import { randomUUID } from "node:crypto";
import { GraphMemClient } from "../src/index.js";

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests with npm test`);
  return value;
}

export const BASE_URL = env("GRAPHMEM_URL");
/** The writer and reader keys may use ts-a only; the admin key every namespace. */
export const NS = "ts-a";

export const writer = (): GraphMemClient =>
  new GraphMemClient({ baseUrl: BASE_URL, apiKey: env("GRAPHMEM_WRITER_KEY"), namespace: NS });
export const reader = (): GraphMemClient =>
  new GraphMemClient({ baseUrl: BASE_URL, apiKey: env("GRAPHMEM_READER_KEY"), namespace: NS });
export const admin = (namespace: string): GraphMemClient =>
  new GraphMemClient({ baseUrl: BASE_URL, apiKey: env("GRAPHMEM_ADMIN_KEY"), namespace });

/** A namespace no other test writes to. */
export const freshNamespace = (): string => `ts-${randomUUID().slice(0, 8)}`;
