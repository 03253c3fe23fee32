// The embedded demo agent's first message says how to configure a real agent
// in the terms of where its server was started: under an editor, the
// `acpRemote.agents` setting and Add Agent…; from a terminal, `acp-remote
// serve --agent`. Real sidecars (one started as the editor starts it, one as
// a person does), the embedded demo, and the SDK's client over /acp.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { methods } from "@agentclientprotocol/sdk";
import { spawnControlled, type ControlChild } from "../helpers/control-child.ts";
import { eventually } from "../helpers/eventually.ts";
import { spawnDemoServe, type DemoServe } from "../web-client/serve-demo.ts";
import { agentText, connectRemote, type RemoteClient } from "../vscode/suite/remote-client.ts";

const TOKEN = "demo-host-test-token-0123456789";
const DEMO_ENV = { ACP_REMOTE_DEMO_DELAY_MS: "0" };

const remotes: RemoteClient[] = [];
const servers: Array<ControlChild | DemoServe> = [];
const folders: string[] = [];
after(async () => {
  for (const r of remotes) r.close();
  for (const s of servers) await ("stop" in s ? s.stop() : s.close());
  for (const f of folders) rmSync(f, { recursive: true, force: true });
});

/** The demo's first message of a turn (it then asks a permission, which is refused so that the turn ends). */
async function firstMessage(url: string): Promise<string> {
  const remote = connectRemote(url, TOKEN);
  remotes.push(remote);
  const cwd = mkdtempSync(join(tmpdir(), "acp-demo-host-"));
  folders.push(cwd);
  return remote.run(async (ctx) => {
    await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd, mcpServers: [] });
    const turn = ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Hello" }] });
    await eventually("the demo's permission request", () => remote.asks.length > 0);
    // The first message is complete once the demo asks: it streams it before proposing the edit.
    const text = agentText(remote.updates, sessionId);
    remote.asks[0]!.answer({ outcome: { outcome: "selected", optionId: "reject_once" } });
    assert.equal((await turn).stopReason, "end_turn");
    return text;
  });
}

describe("the demo agent's advice follows where its server was started", () => {
  it("under the editor, the demo's first message pointed at `acp-remote serve --agent`: it names the acpRemote.agents setting and Add Agent…", async () => {
    const sidecar = await spawnControlled({ token: TOKEN, serve: { agents: [] }, env: DEMO_ENV });
    servers.push(sidecar);
    assert.ok("url" in sidecar.started, `the listener did not start: ${JSON.stringify(sidecar.started)}`);
    const text = await firstMessage(sidecar.started.url);
    assert.match(text, /Hello! I am the demo agent of acp-remote/);
    assert.match(text, /`acpRemote\.agents` setting/);
    assert.match(text, /ACP Remote: Add Agent…/);
    assert.doesNotMatch(text, /acp-remote serve|--agent/);
  });

  it("from a terminal, the demo's first message keeps the `acp-remote serve --agent` advice", async () => {
    const server = await spawnDemoServe({ token: TOKEN, env: DEMO_ENV });
    servers.push(server);
    const text = await firstMessage(server.url);
    assert.match(text, /Hello! I am the demo agent of acp-remote/);
    assert.match(text, /acp-remote serve --agent claude=/);
    assert.doesNotMatch(text, /acpRemote\.agents|Add Agent/);
  });
});
