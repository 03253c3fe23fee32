// ACP Remote: Add Agent… in a real VS Code: the quick pick over the ACP
// Registry (the list shipped with the extension here, with no network), the
// pick written to acpRemote.agents as the command that runs the pinned
// version, and a screenshot of the pick for docs/images/. Then Authenticate
// Agent…: the editor signs the fixture agent in, and a remote client's
// session finds it signed in.
import assert from "node:assert/strict";
import * as vscode from "vscode";
import { methods } from "@agentclientprotocol/sdk";
import { extensionApi, ui, workspaceDir, type TestCase } from "./harness.ts";
import { agentText, connectRemote } from "./remote-client.ts";

export const addAgentCases: TestCase[] = [
  {
    name: "commands | Add Agent: a quick pick over the ACP Registry; the pick is added to acpRemote.agents at the version the registry pins (screenshot)",
    needs: "browser",
    fn: async () => {
      const cfg = () => vscode.workspace.getConfiguration("acpRemote");
      const before = cfg().inspect<unknown[]>("agents")?.workspaceValue;
      try {
        const added = vscode.commands.executeCommand<string | undefined>("acpRemote.addAgent");
        // Filtered to one agent, photographed, then accepted.
        await ui("quickPick", { label: "Gemini CLI", screenshot: "add-agent" });
        assert.equal(await added, "gemini");
        const agents = cfg().inspect<Array<Record<string, unknown>>>("agents")?.workspaceValue ?? [];
        const entry = agents.at(-1) as { name: string; command: string; args: string[] };
        assert.equal(entry.name, "gemini");
        assert.equal(entry.command, "npx");
        // The registry's version, pinned (the shipped list's when there is no network).
        assert.equal(entry.args[0], "-y");
        assert.match(entry.args[1] ?? "", /^@google\/gemini-cli@\d+\.\d+\.\d+$/);
        assert.equal(agents.length, (before?.length ?? 0) + 1, "the other agents are kept");
      } finally {
        await cfg().update("agents", before, vscode.ConfigurationTarget.Workspace);
      }
    },
  },
  {
    name: "commands | Authenticate Agent: the agent's sign-in methods in a quick pick; the one picked is sent as authenticate, and the agent's sessions are signed in",
    needs: "browser",
    fn: async () => {
      const api = await extensionApi();
      const accepted = vscode.commands.executeCommand<string | undefined>("acpRemote.authenticateAgent", "fixture");
      await ui("quickPick", { label: "Fixture login" });
      assert.equal(await accepted, "fixture-login");
      const remote = connectRemote(api.server!.url, await api.token(), "fixture");
      try {
        const sessionId = await remote.run(async (ctx) => {
          await ctx.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
          const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: workspaceDir(), mcpServers: [] });
          await ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "auth" }] });
          return sessionId;
        });
        assert.equal(agentText(remote.updates, sessionId), "auth: fixture-login");
      } finally {
        remote.close();
      }
    },
  },
];
