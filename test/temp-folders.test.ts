// Tests leave nothing in the temporary folder: the flows of the helpers that
// make folders there (certificates, the sidecar's data, TLS material) and the
// README walkthrough (which writes its curl output to /tmp) run in a child
// `node --test` whose TMPDIR is a fresh folder of this test's own, so that
// other test runs on the same machine cannot blur the count. Once the child
// has exited, that folder must be empty.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";
import { after, describe, test } from "node:test";

const ROOT = join(import.meta.dirname, "..");
const base = mkdtempSync(join(tmpdir(), "acp-remote-temp-check-"));
after(() => rmSync(base, { recursive: true, force: true }));

/** Runs one test file in a child `node --test` with TMPDIR set to a fresh folder; answers what is left in it. */
async function leftBehind(file: string): Promise<string[]> {
  const privateTmp = mkdtempSync(join(base, "tmp-"));
  const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: privateTmp };
  // The child is a test runner of its own, not a file reporting to ours.
  delete env["NODE_TEST_CONTEXT"];
  const child = spawn(process.execPath, ["--test", "--test-concurrency=1", "--test-reporter=dot", file], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  assert.equal(code, 0, `${file} passes:\n${output}`);
  return readdirSync(privateTmp);
}

/** The files the README walkthrough names under /tmp (acp-init.txt, acp-session.sse, ...). */
function walkthroughTmpFiles(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  return [...new Set([...readme.matchAll(/\/tmp\/([\w.-]+)/g)].map((m) => m[1]!))];
}

/** Which of the names in /tmp were written since `since` (ms). */
function writtenSince(names: string[], since: number): string[] {
  return names.filter((name) => {
    try {
      return statSync(join("/tmp", name)).mtimeMs >= since;
    } catch {
      return false;
    }
  });
}

describe("temporary folders", () => {
  test("the helpers' folders (test certificate, sidecar data, self-signed TLS) are gone when the test process ends", async () => {
    assert.deepEqual(await leftBehind("test/fixtures/temp-folders/helper-flows.ts"), []);
  });

  test("regression: a killed process that made the test certificate (a benchmark server) no longer leaves its folder", async () => {
    const privateTmp = mkdtempSync(join(base, "tmp-"));
    const helper = pathToFileURL(join(ROOT, "test", "helpers", "tls-cert.ts")).href;
    const script = `const { testCert } = await import(${JSON.stringify(helper)}); await testCert(); console.log("ready"); setInterval(() => {}, 60_000);`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, TMPDIR: privateTmp }, stdio: ["ignore", "pipe", "inherit"] });
    const ready = await new Promise<boolean>((resolve) => {
      createInterface({ input: child.stdout }).once("line", (line) => resolve(line === "ready"));
      child.once("exit", () => resolve(false));
    });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    assert.ok(ready, "the child made the certificate");
    assert.deepEqual(readdirSync(privateTmp), []);
  });

  test("regression: the README walkthrough test wrote its curl output to fixed files in /tmp", async () => {
    const names = walkthroughTmpFiles();
    assert.ok(names.length > 0, "the walkthrough names its files under /tmp");
    // mtime has a coarse clock on some file systems: a second of slack.
    const since = Date.now() - 1000;
    assert.deepEqual(await leftBehind("test/readme.test.ts"), []);
    assert.deepEqual(writtenSince(names, since), [], "the walkthrough run by the test wrote to /tmp itself");
  });
});
