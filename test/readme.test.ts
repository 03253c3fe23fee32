// The README's curl walkthrough, run as written (bash, real curl) against the
// built CLI with the embedded demo agent: over HTTP/2 cleartext, and over
// HTTP/1.1 as the README says it also works. The files the walkthrough keeps
// in /tmp go to a folder of the test's own, removed afterwards.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, test } from "node:test";

const ROOT = join(import.meta.dirname, "..");
const BUILT = join(ROOT, "dist", "cli.mjs");
const CLI = existsSync(BUILT) ? BUILT : join(ROOT, "sidecar", "cli", "main.ts");

function walkthrough(): string {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const block = /<!-- readme-walkthrough:begin -->\n```sh\n([\s\S]*?)```\n<!-- readme-walkthrough:end -->/.exec(readme);
  assert.ok(block, "the README has the walkthrough block");
  return block[1]!;
}

/** Prefix of the test's folders in os.tmpdir(): the server's data and the walkthrough's files. */
const README_DIR_PREFIX = "acp-remote-readme-";

async function withServer<T>(fn: (url: string, token: string, dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), README_DIR_PREFIX));
  const token = "readme-walkthrough-token";
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--data-dir", dir, "--token", token], {
    env: { ...process.env, ACP_REMOTE_DEMO_DELAY_MS: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once("line", resolve);
      child.once("exit", (code) => reject(new Error(`serve exited with ${code}`)));
    });
    return await fn(line.replace("acp-remote listening on ", ""), token, dir);
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once("exit", resolve)));
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("README: a first session, with curl", () => {
  for (const flag of ["--http2-prior-knowledge", "--http1.1"]) {
    test(`the walkthrough works as written (${flag})`, async () => {
      await withServer(async (url, token, dir) => {
        const script = walkthrough().replaceAll("--http2-prior-knowledge", flag).replaceAll("/tmp/", `${dir}/`);
        const result = spawnSync("bash", ["-c", script], { env: { ...process.env, URL: url, TOKEN: token }, cwd: ROOT, encoding: "utf8", timeout: 60_000 });
        assert.equal(result.status, 0, result.stderr);
        const lines = result.stdout.trim().split("\n");
        assert.match(result.stdout, /"connectionId":"[0-9a-f-]+"/, "initialize answers with the connection id");
        assert.deepEqual(lines.slice(1, 4), ["202", "202", "202"], "session/new, the prompt and the permission answer are accepted");
        assert.ok(lines.includes('"stopReason":"end_turn"'), result.stdout);
        assert.equal(lines.at(-1), "202", "DELETE answers 202");
        const session = readFileSync(join(dir, "acp-session.sse"), "utf8");
        for (const kind of ["agent_thought_chunk", "plan", "agent_message_chunk", "tool_call", "tool_call_update"]) {
          assert.match(session, new RegExp(`"sessionUpdate":"${kind}"`), `the session stream carried ${kind}`);
        }
      });
    });
  }
});
