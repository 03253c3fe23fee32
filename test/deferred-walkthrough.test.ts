// docs/deferred.md's curl walkthrough, run as written (bash, real curl)
// against the built CLI with the embedded demo agent, the way
// test/readme.test.ts runs the README's: the answers it quotes are the ones the
// server gives, and each answer is printed on a line of its own.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { test } from "node:test";

const ROOT = join(import.meta.dirname, "..");
const BUILT = join(ROOT, "dist", "cli.mjs");
const CLI = existsSync(BUILT) ? BUILT : join(ROOT, "sidecar", "cli", "main.ts");
/** The token and the address the walkthrough is written with. */
const TOKEN = "walkthrough-token-0123456789";
const WRITTEN_BASE = "http://127.0.0.1:8765";

function walkthrough(): string {
  const doc = readFileSync(join(ROOT, "docs", "deferred.md"), "utf8");
  const block = /<!-- deferred-walkthrough:begin -->\n```sh\n([\s\S]*?)```\n<!-- deferred-walkthrough:end -->/.exec(doc);
  assert.ok(block, "docs/deferred.md has the walkthrough block");
  return block[1]!;
}

/**
 * The answers the walkthrough quotes whole: its comment lines that show a body,
 * a status line or an event, without an elision (`...`).
 */
function quotedAnswers(script: string): string[] {
  return script
    .split("\n")
    .filter((line) => /^# (\{|HTTP\/|data: |www-authenticate:)/.test(line) && !line.includes("...") && !line.includes("…"))
    .map((line) => line.slice(2));
}

test("regression: docs/deferred.md's walkthrough quoted an error message the server does not send and ran answers together on one line; it runs as written", { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "acp-remote-deferred-doc-"));
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--data-dir", join(dir, "data"), "--token", TOKEN], {
    env: { ...process.env, ACP_REMOTE_DEMO_DELAY_MS: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once("line", resolve);
      child.once("exit", (code) => reject(new Error(`serve exited with ${code}`)));
    });
    const base = line.replace("acp-remote listening on ", "");
    const written = walkthrough();
    assert.ok(written.includes(`BASE=${WRITTEN_BASE}`), "the walkthrough names the address it is written for");
    const script = written.replaceAll(WRITTEN_BASE, base).replaceAll("/tmp/", `${dir}/`);
    // Not spawnSync: the server's stderr is inherited, and this process must go on reading it.
    const result = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const bash = spawn("bash", ["-c", script], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      bash.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      bash.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      bash.once("exit", (status) => resolve({ status, stdout, stderr }));
    });
    assert.equal(result.status, 0, result.stderr);
    // Header lines from `curl -i` end in CR LF.
    const lines = result.stdout.split(/\r?\n/);
    for (const answer of quotedAnswers(written)) assert.ok(lines.includes(answer), `the server answers ${answer}; it printed:\n${result.stdout}`);
    for (const body of lines.filter((l) => l.startsWith("{"))) {
      assert.doesNotThrow(() => JSON.parse(body), `one answer per line, not two run together: ${body.slice(0, 200)}`);
    }
    assert.ok(lines.includes("200") && lines.includes("HTTP/1.1 404 Not Found") && lines.includes("data: [DONE]"), result.stdout);
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once("exit", resolve)));
    rmSync(dir, { recursive: true, force: true });
  }
});
