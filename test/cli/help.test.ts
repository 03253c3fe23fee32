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

/** Each row: the command line, and the one line it answers on stderr (exit 2). */
const mistakes: Array<[string[], string]> = [
  [["serve", "--tsl"], "acp-remote serve: unknown flag --tsl, did you mean --tls? (see acp-remote serve --help)"],
  [["serve", "--data_dir", "/tmp/x"], "acp-remote serve: unknown flag --data_dir, did you mean --data-dir? (see acp-remote serve --help)"],
  [["serve", "--frobnicate"], "acp-remote serve: unknown flag --frobnicate (see acp-remote serve --help)"],
  [["serve", "--port"], "acp-remote serve: --port needs a value (see acp-remote serve --help)"],
  [["agents", "--jsno"], "acp-remote agents: unknown flag --jsno, did you mean --json? (see acp-remote agents --help)"],
  [["serv"], 'acp-remote: unknown command "serv", did you mean serve? (see acp-remote --help)'],
];

for (const [args, line] of mistakes) {
  test(`regression: \`acp-remote ${args.join(" ")}\` dumped the whole usage under the error, with no "did you mean"; now one line`, async () => {
    const { code, stdout, stderr } = await run(args);
    assert.equal(code, 2);
    assert.equal(stdout, "");
    assert.equal(stderr, `${line}\n`);
  });
}
