// The adaptations of published agents (sidecar/agents/adaptations.ts): which
// command lines each applies to, and what it changes, by the rows of
// docs/agents.md. The agents' own behaviour with and without them is in the
// per-agent files beside this one.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { adaptationsFor, agentClientCapabilities, agentEnvironment } from "../../sidecar/agents/adaptations.ts";

const spec = (command: string, args: string[] = [], env?: Record<string, string>): AgentSpec => ({ name: "a", command, args, ...(env ? { env } : {}) });
const names = (s: AgentSpec): string[] => adaptationsFor(s).map((a) => a.name);

describe("claude-sandbox-flag-not-inherited", () => {
  for (const s of [
    spec(process.execPath, ["/x/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"]),
    spec("npx", ["-y", "@agentclientprotocol/claude-agent-acp@0.101.0"]),
    spec("npx", ["@zed-industries/claude-code-acp"]),
    spec("/usr/local/bin/claude-agent-acp"),
  ]) {
    test(`applies to ${[s.command, ...s.args].join(" ")}`, () => assert.deepEqual(names(s), ["claude-sandbox-flag-not-inherited"]));
  }

  test("the agent starts without the server's IS_SANDBOX, with the rest of its environment (less ACP_REMOTE_*)", () => {
    const env = agentEnvironment(spec("claude-agent-acp", [], { ANTHROPIC_BASE_URL: "http://127.0.0.1:1" }), { IS_SANDBOX: "yes", PATH: "/bin", ACP_REMOTE_TOKEN: "secret" });
    assert.deepEqual(env, { PATH: "/bin", ANTHROPIC_BASE_URL: "http://127.0.0.1:1" });
  });

  test("an IS_SANDBOX the agent's own env names is kept", () => {
    assert.equal(agentEnvironment(spec("claude-agent-acp", [], { IS_SANDBOX: "1" }), { IS_SANDBOX: "yes" })["IS_SANDBOX"], "1");
  });

  test("another agent inherits IS_SANDBOX", () => {
    assert.equal(agentEnvironment(spec("qwen", ["--acp"]), { IS_SANDBOX: "yes" })["IS_SANDBOX"], "yes");
  });
});

describe("gemini-fs-not-offered", () => {
  for (const s of [spec("gemini", ["--acp"]), spec("/x/node_modules/.bin/gemini", ["--acp"]), spec("npx", ["-y", "@google/gemini-cli@0.27.3", "--experimental-acp"])]) {
    test(`applies to ${[s.command, ...s.args].join(" ")}`, () => assert.deepEqual(names(s), ["gemini-fs-not-offered"]));
  }
  for (const s of [spec("gemini-proxy"), spec("qwen", ["--acp"]), spec("node", ["agents/gemini.js"])]) {
    test(`does not apply to ${[s.command, ...s.args].join(" ")}`, () => assert.deepEqual(names(s), []));
  }

  test("Gemini CLI is offered terminals but no fs/*; other agents both", () => {
    const offered = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };
    assert.deepEqual(agentClientCapabilities(spec("gemini", ["--acp"]), offered), { terminal: true });
    assert.deepEqual(agentClientCapabilities(spec("qwen", ["--acp"]), offered), offered);
  });
});
