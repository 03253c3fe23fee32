// The built `acp-remote` (dist/cli.mjs) on a Node older than the one the
// server needs, as a reader of the README runs it on the Node 20 it names:
// what needs no store (--version, --help, connect) works; `serve` says in one
// line which Node it needs and what to run instead. The old Node is the
// system's (a `node` on PATH, /usr/bin/node, /usr/local/bin/node) that has no
// node:sqlite; without one the tests that need it are skipped, saying why.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { MIN_SERVE_NODE, nodeTooOld } from "../../sidecar/cli/launcher.ts";
import { serveFixture, type ServedFixture } from "../helpers/sidecar-server.ts";
import { TOKEN } from "../helpers/transport-server.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "cli.mjs");

/** A `node` of this machine without node:sqlite, with its version; undefined when there is none. */
function findOldNode(): { node: string; version: string } | undefined {
  const candidates = new Set<string>();
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) if (dir !== "") candidates.add(join(dir, "node"));
  for (const path of ["/usr/bin/node", "/usr/local/bin/node", "/bin/node"]) candidates.add(path);
  for (const node of candidates) {
    if (!existsSync(node)) continue;
    try {
      const [version, sqlite] = execFileSync(node, ["-p", "`${process.versions.node} ${process.getBuiltinModule?.('node:sqlite') !== undefined}`"], { encoding: "utf8", timeout: 10_000 }).trim().split(" ");
      if (sqlite === "false") return { node, version: version as string };
    } catch {
      // Not a Node that runs: the next one.
    }
  }
  return undefined;
}

const old = findOldNode();
const skip = old === undefined ? "no node without node:sqlite on this machine (PATH, /usr/bin, /usr/local/bin)" : false;
if (old === undefined) console.log(`# skipped: ${skip}`);

function run(args: string[], input?: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(old!.node, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin.end(input);
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, stdout, stderr })));
}

describe(`dist/cli.mjs on Node ${old?.version ?? "20"}`, { skip }, () => {
  let server: ServedFixture | undefined;
  before(async () => {
    // The built CLI is what is tested; built here when it is not there.
    if (!existsSync(CLI) || !existsSync(join(ROOT, "dist", "acp-remote.mjs"))) {
      execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "inherit" });
    }
    server = await serveFixture({ tokens: [TOKEN] });
  });
  after(async () => {
    await server?.close();
  });

  for (const [args, expected] of [
    [["--version"], /^\d+\.\d+\.\d+\n$/],
    [["--help"], /^acp-remote \d+\.\d+\.\d+\n\nUsage:/],
    [["serve", "--help"], /^Usage: acp-remote serve/],
    [["connect", "--help"], /^Usage: acp-remote connect/],
  ] as const) {
    test(`regression: \`node dist/cli.mjs ${args.join(" ")}\` stopped with ERR_UNKNOWN_BUILTIN_MODULE node:sqlite; it needs no store and works`, async () => {
      const { code, stdout, stderr } = await run([...args]);
      assert.equal(stderr, "");
      assert.match(stdout, expected);
      assert.equal(code, 0);
    });
  }

  test("regression: `node dist/cli.mjs serve` stopped with a stack trace; now one line names the Node it needs and `npx acp-remote`, exit 1", async () => {
    const { code, stdout, stderr } = await run(["serve", "--port", "0"]);
    assert.equal(code, 1);
    assert.equal(stdout, "");
    assert.equal(stderr.split("\n").length, 2, `one line: ${stderr}`);
    assert.match(stderr, new RegExp(`needs Node ${MIN_SERVE_NODE.replace(".", "\\.")} or newer, and this is Node ${old!.version.replaceAll(".", "\\.")}`));
    assert.match(stderr, /`npx acp-remote serve …`/);
    assert.doesNotMatch(stderr, /ERR_UNKNOWN_BUILTIN_MODULE|\n\s+at /);
  });

  test("regression: `connect` on Node 20 relays to a real server: initialize answered", async () => {
    const initialize = JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: 1, clientCapabilities: {} } });
    const { code, stdout, stderr } = await run(["connect", server!.server.url], `${initialize}\n`, { ACP_REMOTE_TOKEN: TOKEN });
    assert.equal(code, 0, stderr);
    const answer = JSON.parse(stdout.split("\n")[0] ?? "") as { id: number; result?: { protocolVersion: number } };
    assert.equal(answer.id, 0);
    assert.equal(answer.result?.protocolVersion, 1);
    assert.match(stderr, /connected to .* over h2/);
  });
});

describe("the launcher's check", () => {
  test("MIN_SERVE_NODE is package.json's engines.node", () => {
    const engines = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } }).engines.node;
    assert.equal(engines, `>=${MIN_SERVE_NODE}`);
  });

  test("serve on a Node without node:sqlite gets the line; help, other commands and a Node with it do not", () => {
    assert.match(nodeTooOld(["serve", "--port", "0"], "20.20.2", false) ?? "", /^acp-remote serve needs Node 22\.19 or newer, and this is Node 20\.20\.2: /);
    assert.equal(nodeTooOld(["serve", "--help"], "20.20.2", false), undefined);
    assert.equal(nodeTooOld(["connect", "http://h"], "20.20.2", false), undefined);
    assert.equal(nodeTooOld(["--version"], "18.0.0", false), undefined);
    assert.equal(nodeTooOld(["serve"], "22.19.0", true), undefined);
    assert.equal(nodeTooOld(["serve"], "24.1.0", true), undefined);
  });
});
