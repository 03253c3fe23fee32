// `--help` of every command: the usage on stdout and exit code 0, never
// "Unknown option". The built CLI (dist/cli.mjs, which `npm test` builds first)
// as a child process, as in serve.test.ts.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

const ROOT = join(import.meta.dirname, "..", "..");
const BUILT = join(ROOT, "dist", "cli.mjs");
const CLI = existsSync(BUILT) ? [BUILT] : [join(ROOT, "sidecar", "cli", "main.ts")];

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, stdout, stderr })));
}

/** Each row: the command line, its usage, and what it did before it printed that usage. */
const rows: Array<[string[], RegExp, string | undefined]> = [
  [["serve", "--help"], /^Usage: acp-remote serve \[options\]/, "answered \"Unknown option '--help'\""],
  [["serve", "-h"], /^Usage: acp-remote serve \[options\]/, "answered \"Unknown option '-h'\""],
  [["serve", "--port", "0", "--help"], /^Usage: acp-remote serve \[options\]/, "answered \"Unknown option '--help'\""],
  [["connect", "--help"], /^Usage: acp-remote connect <url> \[options\]/, "wrote its usage on stderr"],
  [["connect", "-h"], /^Usage: acp-remote connect <url> \[options\]/, "wrote its usage on stderr"],
  [["demo-agent", "--help"], /^Usage: acp-remote demo-agent/, "started the demo agent"],
  [["--help"], /^acp-remote \d+\.\d+\.\d+\n\nUsage:/, undefined],
  [["-h"], /^acp-remote \d+\.\d+\.\d+\n\nUsage:/, undefined],
];

for (const [args, usage, before] of rows) {
  const line = `\`acp-remote ${args.join(" ")}\``;
  const name = before === undefined ? `${line}: the usage on stdout, exit 0` : `regression: ${line} ${before} instead of the usage on stdout, exit 0`;
  test(name, async () => {
    const { code, stdout, stderr } = await run(args);
    assert.equal(stderr, "");
    assert.match(stdout, usage);
    assert.equal(code, 0);
  });
}

test("serve with a bad option: the error and the usage on stderr, exit 2", async () => {
  const { code, stdout, stderr } = await run(["serve", "--frobnicate"]);
  assert.equal(code, 2);
  assert.equal(stdout, "");
  assert.match(stderr, /^acp-remote serve: Unknown option '--frobnicate'/);
  assert.match(stderr, /Usage: acp-remote serve/);
});
