// `npm test` under failure: a test file that fails and leaves a server, a
// socket, a child process and a never-ending `after` behind ends in its
// timeout with the flags npm test uses, instead of holding the run for ever.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { NODE_TEST_FLAGS } from "../scripts/test-flags.mjs";

const FIXTURE = new URL("./fixtures/runner/hanging.fixture.ts", import.meta.url).pathname;
/** The fixture's own timeout: short, so the row is quick. */
const TIMEOUT_MS = 2_000;

test("a failing test file that leaves a server, a socket, a child and a hanging after ends in its timeout, not never", async () => {
  const flags = NODE_TEST_FLAGS.map((f) => (f.startsWith("--test-timeout=") ? `--test-timeout=${TIMEOUT_MS}` : f));
  const started = Date.now();
  // Without the runner's own marker, which would make the child report to this runner instead of running as npm test does.
  const { NODE_TEST_CONTEXT: _, ...env } = process.env;
  const child = spawn(process.execPath, [...flags, FIXTURE], { stdio: ["ignore", "pipe", "pipe"], env });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
  // Bounded here so a regression fails this row instead of hanging it.
  const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  clearTimeout(killer);
  const took = Date.now() - started;
  assert.notEqual(code, null, `the run had to be killed after ${took} ms:\n${out}`);
  assert.notEqual(code, 0, "the failure is reported");
  assert.match(out, /deliberate failure/);
  assert.ok(took < 30_000, `ended after ${took} ms`);
});
