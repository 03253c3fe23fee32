// In-editor cases of the deferred completion flow: the palette command with
// its quick pick and progress notification, the result document, and the
// "Deferred completions" view. They need the server running with the fixture
// agent (the suite's first case starts it).
import assert from "node:assert/strict";
import * as vscode from "vscode";
import { hasBrowser, ui, waitFor, type TestCase } from "./harness.ts";

const SUBMIT = "acpRemote.submitDeferredCompletion";
const VIEW_FOCUS = "acpRemote.deferred.focus";

/**
 * Accepts the quick pick's selected item until `done` settles: the command
 * shows its quick pick once the server listed the models, a moment no event
 * tells, so the accept is tried again until the command has taken it.
 */
async function acceptQuickPickUntil(done: Promise<unknown>): Promise<void> {
  let settled = false;
  done.then(
    () => (settled = true),
    () => (settled = true),
  );
  await waitFor("the command to take the quick pick's item and finish", async () => {
    if (!settled) await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
    return settled;
  });
}

export const deferredCases: TestCase[] = [
  {
    name: "deferred | Submit deferred completion: model from the quick pick, prompt from the selection, result as Markdown with the reasoning folded",
    fn: async () => {
      const source = await vscode.workspace.openTextDocument({ language: "plaintext", content: "think weighing the options\necho the deferred answer" });
      const editor = await vscode.window.showTextDocument(source);
      editor.selection = new vscode.Selection(0, 0, source.lineCount, 0);
      const done = Promise.resolve(vscode.commands.executeCommand(SUBMIT));
      await acceptQuickPickUntil(done);
      await done;
      const result = await waitFor("the result document", () => {
        const doc = vscode.window.activeTextEditor?.document;
        return doc && doc.languageId === "markdown" && doc.isUntitled ? doc : undefined;
      });
      const text = result.getText();
      assert.match(text, /^# fixture$/m);
      assert.match(text, /<details>\n<summary>Reasoning<\/summary>\n\nweighing the options\n\n<\/details>/);
      assert.match(text, /\nthe deferred answer\n/);
      assert.match(text, /finish reason `stop`/);
      await ui("screenshot", { name: "deferred-result" });
      await vscode.commands.executeCommand(VIEW_FOCUS);
      // The view's rows are only seen in a browser (test-electron has none).
      if (!hasBrowser()) return;
      const tree = await ui<{ text: string }>("treeText", { contains: "fetched" });
      assert.match(tree.text, /think weighing the options/);
      await ui("screenshot", { name: "deferred-view", element: ".part.sidebar" });
    },
  },
];
