// docs/deferred.md's curl walkthrough, run as written (bash, real curl)
// against the built CLI with the embedded demo agent, the way
// test/readme.test.ts runs the README's: the answers it quotes are the ones the
// server gives, and each answer is printed on a line of its own.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { ROOT, walkthrough, withDemoServed } from "./helpers/doc-walkthrough.ts";

/** The token and the address the walkthrough is written with. */
const TOKEN = "walkthrough-token-0123456789";
const WRITTEN_BASE = "http://127.0.0.1:8765";

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
  await withDemoServed({ prefix: "acp-remote-deferred-doc-", token: TOKEN, dataIn: "data" }, async (base, dir) => {
    const written = walkthrough("docs/deferred.md", "deferred-walkthrough");
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
  });
});
