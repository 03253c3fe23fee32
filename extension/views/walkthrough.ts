// ACP Remote: Get Started opens the walkthrough (package.json
// contributes.walkthroughs): from a started server to a first session, an
// answered permission request and a paired phone. Its steps are marked done by
// the commands they name and by the context keys of context-keys.ts.
import * as vscode from "vscode";
import { Command } from "../command-ids.ts";
import type { CommandSpec } from "../command-spec.ts";

/** `publisher.name#walkthroughId`, as workbench.action.openWalkthrough takes it. */
const WALKTHROUGH_ID = "acp-remote.acp-remote#acpRemote.gettingStarted";

export const WALKTHROUGH_COMMANDS: readonly CommandSpec[] = [
  { id: Command.openWalkthrough, whenDown: "run", run: () => vscode.commands.executeCommand("workbench.action.openWalkthrough", WALKTHROUGH_ID, false) },
];
