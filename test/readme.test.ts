// The README's curl walkthrough, run as written (bash, real curl) against the
// built CLI with the embedded demo agent: over HTTP/2 cleartext, and over
// HTTP/1.1 as the README says it also works. The files the walkthrough keeps
// in /tmp go to a folder of the test's own, removed afterwards.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { ROOT, walkthrough, withDemoServed } from "./helpers/doc-walkthrough.ts";

const TOKEN = "readme-walkthrough-token";
/** Prefix of the test's folders in os.tmpdir(): the server's data and the walkthrough's files. */
const README_DIR_PREFIX = "acp-remote-readme-";

describe("README: a first session, with curl", () => {
  for (const flag of ["--http2-prior-knowledge", "--http1.1"]) {
    test(`the walkthrough works as written (${flag})`, async () => {
      await withDemoServed({ prefix: README_DIR_PREFIX, token: TOKEN }, async (url, dir) => {
        const script = walkthrough("README.md", "readme-walkthrough").replaceAll("--http2-prior-knowledge", flag).replaceAll("/tmp/", `${dir}/`);
        const result = spawnSync("bash", ["-c", script], { env: { ...process.env, URL: url, TOKEN }, cwd: ROOT, encoding: "utf8", timeout: 60_000 });
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
