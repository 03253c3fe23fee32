// `acp-remote serve` as a user runs it: the built CLI (dist/cli.mjs, which
// `npm test` builds first) as a child process.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, describe, test } from "node:test";

const ROOT = join(import.meta.dirname, "..", "..");
const BUILT = join(ROOT, "dist", "cli.mjs");
// The built bundle is what users run; from a fresh checkout without a build, the source.
const CLI = existsSync(BUILT) ? [BUILT] : [join(ROOT, "sidecar", "cli", "main.ts")];

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "acp-remote-cli-"));
  dirs.push(dir);
  return dir;
}

interface Started {
  child: ChildProcess;
  firstLine: string;
  stderr: () => string;
}

function start(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Started> {
  const child = spawn(process.execPath, [...CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", (firstLine) => resolve({ child, firstLine, stderr: () => stderr }));
    child.once("exit", (code) => reject(new Error(`exited with ${code} before printing: ${stderr}`)));
  });
}

function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once("exit", (code) => resolve({ code, stdout, stderr })));
}

/** Resolves once the child's stderr matches `pattern`; rejects when it exits first. */
function untilStderr(started: Started, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!pattern.test(started.stderr())) return;
      started.child.stderr!.off("data", onData);
      started.child.off("exit", onExit);
      resolve();
    };
    // start() appends to stderr() in its own listener, registered first.
    const onData = (): void => check();
    const onExit = (): void => reject(new Error(`exited before stderr showed ${pattern}: ${started.stderr()}`));
    started.child.stderr!.on("data", onData);
    started.child.once("exit", onExit);
    check();
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((resolve) => child.once("exit", (code) => resolve(code)));
}

describe("acp-remote serve", () => {
  test("prints exactly `acp-remote listening on <base URL>` first, and stops cleanly on SIGTERM", async () => {
    const dir = dataDir();
    const { child, firstLine, stderr } = await start(["serve", "--port", "0", "--data-dir", dir, "--token", "secret-token-123456"]);
    const match = /^acp-remote listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(firstLine);
    assert.ok(match, firstLine);
    const url = match[1]!;
    // The server answers: the demo agent initializes behind /acp.
    const response = await fetch(`${url}/acp`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer secret-token-123456" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } }),
    });
    assert.equal(response.status, 200);
    const body = (await response.json()) as { result: { agentInfo: { name: string } } };
    assert.equal(body.result.agentInfo.name, "acp-remote-demo");
    assert.match(stderr(), /embedded demo agent/);
    child.kill("SIGTERM");
    assert.equal(await exited(child), 0);
    assert.ok(existsSync(join(dir, "acp-remote.sqlite")), "the store is in the data folder");
  });

  test("without a token, one is generated and kept for the next start; stderr that is not a terminal gets its file, never the token", async () => {
    const dir = dataDir();
    const first = await start(["serve", "--port", "0", "--data-dir", dir], { ACP_REMOTE_TOKEN: "" });
    await untilStderr(first, /access token/);
    const token = readFileSync(join(dir, "token"), "utf8").trim();
    assert.ok(token.length >= 32);
    assert.ok(!first.stderr().includes(token), "the token is not printed where a log could keep it");
    assert.ok(first.stderr().includes(join(dir, "token")), "the token's file is named");
    const url = first.firstLine.replace("acp-remote listening on ", "");
    const denied = await fetch(`${url}/acp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    assert.equal(denied.status, 401);
    first.child.kill("SIGINT");
    assert.equal(await exited(first.child), 0);
    const second = await start(["serve", "--port", "0", "--data-dir", dir], { ACP_REMOTE_TOKEN: "" });
    await untilStderr(second, /access token/);
    assert.equal(readFileSync(join(dir, "token"), "utf8").trim(), token, "the same token on the next start");
    const again = second.firstLine.replace("acp-remote listening on ", "");
    const allowed = await fetch(`${again}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(allowed.status, 200);
    second.child.kill("SIGTERM");
    await exited(second.child);
  });

  test("ACP_REMOTE_TOKEN sets the token", async () => {
    const dir = dataDir();
    const { child, firstLine } = await start(["serve", "--port", "0", "--data-dir", dir], { ACP_REMOTE_TOKEN: "from-the-environment-42" });
    const url = firstLine.replace("acp-remote listening on ", "");
    const ok = await fetch(`${url}/v1/models`, { headers: { authorization: "Bearer from-the-environment-42" } });
    assert.equal(ok.status, 200);
    child.kill("SIGTERM");
    await exited(child);
  });

  test("regression: behind a proxy the pairing line named the loopback address; with --public-url (or ACP_REMOTE_PUBLIC_URL) it names the public URL", async () => {
    for (const [args, env] of [
      [["--public-url", "https://phone.test/acp-remote/"], {}],
      [[], { ACP_REMOTE_PUBLIC_URL: "https://phone.test/acp-remote https://other.test" }],
    ] as const) {
      const started = await start(["serve", "--port", "0", "--data-dir", dataDir(), "--token", "public-url-token-0123", ...args], env);
      try {
        await untilStderr(started, /web client at/);
        assert.match(started.stderr(), /web client at https:\/\/phone\.test\/acp-remote\/ \(pair with https:\/\/phone\.test\/acp-remote\/#token=<token>\)/);
        assert.match(started.firstLine, /^acp-remote listening on http:\/\/127\.0\.0\.1:\d+$/, "scripts still read the server's own address first");
      } finally {
        started.child.kill("SIGTERM");
        await exited(started.child);
      }
    }
    const { code, stderr } = await run(["serve", "--data-dir", dataDir()], { ACP_REMOTE_PUBLIC_URL: "phone.test" });
    assert.equal(code, 2);
    assert.match(stderr, /--public-url: "phone\.test" is not a URL \(from ACP_REMOTE_PUBLIC_URL\)/);
  });

  test("--no-auth is refused on a host that is not loopback", async () => {
    const { code, stderr } = await run(["serve", "--port", "0", "--host", "0.0.0.0", "--no-auth", "--data-dir", dataDir()]);
    assert.equal(code, 1);
    assert.match(stderr, /--no-auth is only allowed on a loopback host/);
  });

  test("regression: a port already in use was said after the agents' start and stop lines; now it is the first and only line, with the fix", async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const dir = dataDir();
      // The embedded demo agent: it was started, and stopped, before the message.
      const { code, stderr } = await run(["serve", "--port", String(port), "--no-auth", "--data-dir", dir]);
      assert.equal(code, 1);
      const lines = stderr.trimEnd().split("\n");
      assert.match(lines[0] ?? "", new RegExp(`^acp-remote serve: port ${port} on 127\\.0\\.0\\.1 is already in use.*--port`));
      assert.equal(lines.length, 1, stderr);
      assert.ok(!existsSync(join(dir, "acp-remote.sqlite")), "nothing started: not even the store");
    } finally {
      blocker.close();
    }
  });

  test("bad flags name the flag", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["--port", "70000"], /--port: "70000" is not a port number/],
      [["--agent", "=x"], /--agent "=x": the agent name is empty/],
      [["--agent", "bad name=cmd"], /--agent "bad name=cmd": the agent name may hold only/],
      [["--agent", "a=cmd 'unclosed"], /--agent a: unterminated single quote/],
      [["--agent", "nosuchagent"], /--agent nosuchagent: "nosuchagent" is not an agent of the ACP Registry/],
      [["--cert", "only-cert.pem"], /--cert and --key go together/],
      [["--control", "tcp"], /--control: only "stdio"/],
      [["--public-url", "ftp://box.example"], /--public-url: "ftp:\/\/box\.example" is not an http\(s\) URL/],
      [["--public-url", "https://box.example/acp-remote?x"], /--public-url: .* has a query or a fragment/],
      [["--bogus"], /bogus/],
    ];
    for (const [flags, expected] of cases) {
      const { code, stderr } = await run(["serve", ...flags, "--data-dir", dataDir()]);
      assert.equal(code, 2, `${flags.join(" ")}: ${stderr}`);
      assert.match(stderr, expected);
    }
  });

  test("regression: an --agent error repeated its argument (`--agent =foo: --agent \"=foo\": …`); now it names it once", async () => {
    for (const value of ["=foo", "bad name=cmd", "nosuchagent"]) {
      const { code, stderr } = await run(["serve", "--agent", value, "--data-dir", dataDir()], { ACP_REMOTE_REGISTRY_URL: "" });
      assert.equal(code, 2, stderr);
      assert.equal(stderr.split("--agent").length - 1, 1, `"--agent" once: ${stderr}`);
      assert.equal(stderr.trimEnd().split("\n").length, 1, `one line: ${stderr}`);
    }
  });

  test("an agent that cannot start is reported on initialize, the server keeps serving", async () => {
    const dir = dataDir();
    const { child, firstLine } = await start(["serve", "--port", "0", "--no-auth", "--data-dir", dir, "--agent", "broken=/nonexistent/agent --acp"]);
    const url = firstLine.replace("acp-remote listening on ", "");
    const response = await fetch(`${url}/acp`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } }),
    });
    const body = (await response.json()) as { error?: { message: string } };
    assert.match(body.error?.message ?? "", /broken/);
    const models = await fetch(`${url}/v1/models`);
    assert.equal(models.status, 200);
    child.kill("SIGTERM");
    assert.equal(await exited(child), 0);
  });

  test("--version and --help", async () => {
    const version = await run(["--version"]);
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
    const help = await run(["--help"]);
    assert.match(help.stdout, /acp-remote serve/);
    assert.match(help.stdout, /acp-remote connect/);
  });
});
