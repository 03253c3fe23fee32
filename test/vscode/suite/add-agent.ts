// ACP Remote: Add Agent… in a real VS Code: the quick pick over the ACP
// Registry (the list shipped with the extension here, with no network), the
// pick written to acpRemote.agents as the command that runs the pinned
// version, and a screenshot of the pick for docs/images/.
import assert from "node:assert/strict";
import * as vscode from "vscode";
import { ui, type TestCase } from "./harness.ts";

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
];
