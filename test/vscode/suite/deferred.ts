// In-editor cases of the deferred completion flow: the palette command with
// its quick pick and progress notification (what the job waits on, with a
// link to answer its permission request), the result as a read-only document
// of our own, opened within moments of the job's end, and the "Deferred
// completions" view. They need the server running with the fixture and demo
// agents (the suite's first case starts it).
import assert from "node:assert/strict";
import * as vscode from "vscode";
import { Command } from "../../../extension/command-ids.ts";
import { DEFERRED_RESULT_SCHEME } from "../../../extension/deferred/ids.ts";
import type { DeferredJobEntry } from "../../../extension/deferred/job-list.ts";
import { extensionApi, hasBrowser, inNotificationCentre, notificationShows, ui, waitFor, type TestCase } from "./harness.ts";

const SUBMIT = Command.submitDeferredCompletion;
const VIEW_FOCUS = "acpRemote.deferred.focus";
const ANSWER_PERMISSION = "acpRemote.answerPermission";
/** Acceptance: a finished job's result shows within this of the job's end (the server's time), in milliseconds. */
const RESULT_SHOWN_WITHIN_MS = 2_000;

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

/** The request_id a result document shows (`acp-remote-deferred:/<request_id>/<title>.md`). */
function requestIdOf(uri: vscode.Uri): string {
  return decodeURIComponent(uri.path.split("/")[1] ?? "");
}

/** A result document: ours, or an untitled Markdown buffer as results once were (the cases then say what is wrong with it). */
function isResult(document: vscode.TextDocument): boolean {
  return document.uri.scheme === DEFERRED_RESULT_SCHEME || (document.isUntitled && document.languageId === "markdown");
}

/**
 * The next result document that comes in front, and when it did (the
 * listener is set before the job can finish, so no moment is missed).
 */
function nextResult(): { shown: Promise<{ document: vscode.TextDocument; at: number }>; dispose(): void } {
  let listener: vscode.Disposable | undefined;
  const shown = new Promise<{ document: vscode.TextDocument; at: number }>((resolve) => {
    const check = (editor: vscode.TextEditor | undefined): void => {
      if (!editor || !isResult(editor.document)) return;
      listener?.dispose();
      resolve({ document: editor.document, at: Date.now() });
    };
    listener = vscode.window.onDidChangeActiveTextEditor(check);
  });
  return { shown, dispose: () => listener?.dispose() };
}

/** Waits for `what` with a deadline (the notification's text arrives as the job changes state). */
async function withDeadline<T>(what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), 60_000);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function job(requestId: string): Promise<DeferredJobEntry> {
  const api = await extensionApi();
  return waitFor(`job ${requestId} in the list`, () => api.deferredJobs().find((j) => j.requestId === requestId));
}

/** The editor's groups and the permissions panel's tabs in them. */
function layout(): { groups: number; permissionsTabs: number } {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs);
  return {
    groups: vscode.window.tabGroups.all.length,
    permissionsTabs: tabs.filter((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith("acpRemote.permissions")).length,
  };
}

/** Closes the permissions panel and every editor group but the first: the layout a case starts from. */
async function closePermissionsPanel(): Promise<void> {
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.endsWith("acpRemote.permissions"));
  if (tabs.length > 0) await vscode.window.tabGroups.close(tabs);
  await vscode.commands.executeCommand("workbench.action.joinAllGroups");
  await waitFor("one editor group and no permissions panel", () => layout().groups === 1 && layout().permissionsTabs === 0);
}

/** A deferred completion submitted on /v1 as any client does (to hold the model's slots). */
async function submitOverHttp(model: string, prompt: string): Promise<string> {
  const api = await extensionApi();
  const res = await fetch(`${api.server!.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${await api.token()}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: prompt }], deferred: true }),
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { request_id: string }).request_id;
}

async function cancelOverHttp(requestId: string): Promise<void> {
  const api = await extensionApi();
  if (!api.server) return;
  const res = await fetch(`${api.server.url}/v1/chat/deferred-completion/${requestId}`, { method: "DELETE", headers: { authorization: `Bearer ${await api.token()}` } });
  await res.arrayBuffer();
}

/** The permission request the run of the job submitted with `prompt` waits on, once the editor was asked it. */
async function permissionOf(prompt: string): Promise<string> {
  const api = await extensionApi();
  const entry = await waitFor("the job's permission request in the editor", () => {
    const requestId = api.deferredJobs().find((j) => j.prompt === prompt)?.requestId;
    return requestId !== undefined && api.permissions().find((e) => e.state === "pending" && e.info.requestId === requestId);
  });
  return entry.info.permissionId;
}

/**
 * What `document` holds after `text` is typed into its editor, as keys do (the
 * `type` command). Typed first into a scratch document, which takes it: the
 * command reaches the editor in front.
 */
async function typedInto(document: vscode.TextDocument, text: string): Promise<string> {
  const scratch = await vscode.workspace.openTextDocument({ language: "plaintext", content: "" });
  await vscode.window.showTextDocument(scratch);
  await vscode.commands.executeCommand("type", { text });
  await waitFor("the scratch document to take what is typed", () => scratch.getText() === text);
  await vscode.commands.executeCommand("workbench.action.revertAndCloseActiveEditor");
  await vscode.window.showTextDocument(document);
  await vscode.commands.executeCommand("type", { text });
  return document.getText();
}

export const deferredCases: TestCase[] = [
  {
    name: "deferred | Submit deferred completion: model from the quick pick, prompt from the selection, result as Markdown with the reasoning folded",
    fn: async () => {
      const source = await vscode.workspace.openTextDocument({ language: "plaintext", content: "think weighing the options\necho the deferred answer" });
      const editor = await vscode.window.showTextDocument(source);
      editor.selection = new vscode.Selection(0, 0, source.lineCount, 0);
      const result = nextResult();
      const done = Promise.resolve(vscode.commands.executeCommand(SUBMIT));
      await acceptQuickPickUntil(done);
      await done;
      const { document } = await withDeadline("the result document", result.shown);
      assert.equal(document.languageId, "markdown");
      const text = document.getText();
      assert.match(text, /^# fixture$/m);
      assert.match(text, /<details>\n<summary>Reasoning<\/summary>\n\nweighing the options\n\n<\/details>/);
      assert.match(text, /\nthe deferred answer\n/);
      assert.match(text, /finish reason `stop`/);
      // The selection's scratch document goes; the result stays in front for the screenshot.
      await vscode.window.showTextDocument(source);
      await vscode.commands.executeCommand("workbench.action.revertAndCloseActiveEditor");
      await vscode.window.showTextDocument(document);
      await ui("screenshot", { name: "deferred-result" });
      await vscode.commands.executeCommand(VIEW_FOCUS);
      // The view's rows are only seen in a browser (test-electron has none).
      if (!hasBrowser()) return;
      const tree = await ui<{ text: string }>("treeText", { contains: "fetched" });
      assert.match(tree.text, /think weighing the options/);
      await ui("screenshot", { name: "deferred-view", element: ".part.sidebar" });
    },
  },
  {
    name: "deferred | the progress notification says what the job waits on (it only spun): queued, running, then waiting for your permission, with an Answer link that opens the request",
    // What the notification says is read from the page.
    needs: "browser",
    fn: async () => {
      await closePermissionsPanel();
      const prompt = "slow 5000\npermission Deploy the site\necho deployed";
      // Both slots of the fixture model taken (DEFAULT_V1_CONCURRENCY_PER_BACKEND): the job queues.
      const blockers = [await submitOverHttp("fixture", "slow 120000"), await submitOverHttp("fixture", "slow 120000")];
      const result = nextResult();
      try {
        const done = Promise.resolve(vscode.commands.executeCommand(SUBMIT, { model: "fixture", prompt }));
        await notificationShows("Queued: waiting for a free slot on fixture.");
        for (const id of blockers) await cancelOverHttp(id);
        await notificationShows("Running: fixture is working on it.");
        await notificationShows('Waiting for your permission: fixture asks to run "Deploy the site". Answer');
        await inNotificationCentre(async () => {
          await ui("screenshot", { name: "deferred-waiting-permission", element: ".notifications-center" });
          // The person opens the request from the notification...
          await ui("clickNotificationLink", { notification: "deferred completion on fixture", label: "Answer" });
        });
        // ...and answers it in the panel the link opened.
        await ui("clickPermission", { permissionId: await permissionOf(prompt), optionId: "allow_once" });
        const { document } = await withDeadline("the result document", result.shown);
        assert.match(document.getText(), /outcome: selected allow_once/);
        await done;
      } finally {
        result.dispose();
        for (const id of blockers) await cancelOverHttp(id);
      }
    },
  },
  {
    name: "deferred | a deferred job's permission request opens no Permissions panel by itself in a split: the editor's groups stay as they were",
    // The panel would open as the request arrives: the notification read from the page comes after that moment.
    needs: "browser",
    fn: async () => {
      await closePermissionsPanel();
      const prompt = "Show me what you can do (no panel)";
      const result = nextResult();
      try {
        const done = Promise.resolve(vscode.commands.executeCommand(SUBMIT, { model: "demo", prompt }));
        const permissionId = await permissionOf(prompt);
        await notificationShows("Waiting for your permission: demo asks to run");
        assert.deepEqual(layout(), { groups: 1, permissionsTabs: 0 }, "no panel opened, no group split off");
        await vscode.commands.executeCommand(ANSWER_PERMISSION, permissionId, "allow_once");
        const { document } = await withDeadline("the result document", result.shown);
        assert.match(document.getText(), /You approved the edit \(allow once\)/);
        await done;
        assert.deepEqual(layout(), { groups: 1, permissionsTabs: 0 });
      } finally {
        result.dispose();
      }
    },
  },
  {
    name: "deferred | the result shows within 2 s of the job's finish by the server's clock (polling backed off: a 2-second demo turn showed after 55 s), for the demo and for a 9-second job",
    fn: async () => {
      // The demo's turn, its permission answered as soon as it is asked.
      const demoPrompt = "Show me what you can do (timed)";
      const demoResult = nextResult();
      try {
        const done = Promise.resolve(vscode.commands.executeCommand(SUBMIT, { model: "demo", prompt: demoPrompt }));
        await vscode.commands.executeCommand(ANSWER_PERMISSION, await permissionOf(demoPrompt), "allow_once");
        const shown = await withDeadline("the demo's result document", demoResult.shown);
        const finished = (await job(requestIdOf(shown.document.uri))).finishedAt;
        assert.ok(finished !== undefined, "the server told when the job finished");
        assert.ok(shown.at - finished <= RESULT_SHOWN_WITHIN_MS, `the demo's result showed ${shown.at - finished} ms after the job finished`);
        await done;
      } finally {
        demoResult.dispose();
      }
      // A job that ends between the steps of a doubling backoff (1, 3, 7, 15 s after the submission).
      const slowResult = nextResult();
      try {
        const done = Promise.resolve(vscode.commands.executeCommand(SUBMIT, { model: "fixture", prompt: "slow 9000\necho nine seconds" }));
        const shown = await withDeadline("the 9-second job's result document", slowResult.shown);
        const finished = (await job(requestIdOf(shown.document.uri))).finishedAt;
        assert.ok(finished !== undefined, "the server told when the job finished");
        assert.ok(shown.at - finished <= RESULT_SHOWN_WITHIN_MS, `the 9-second job's result showed ${shown.at - finished} ms after the job finished`);
        await done;
      } finally {
        slowResult.dispose();
      }
    },
  },
  {
    name: "deferred | Cancel on the progress notification cancels the job on the server (it only stopped waiting)",
    // The notification's button is clicked in the page.
    needs: "browser",
    fn: async () => {
      const api = await extensionApi();
      const prompt = "slow 120000\necho never";
      const done = Promise.resolve(vscode.commands.executeCommand(SUBMIT, { model: "fixture", prompt }));
      await notificationShows("Running: fixture is working on it.");
      const requestId = (await waitFor("the job in the list", () => api.deferredJobs().find((j) => j.prompt === prompt))).requestId;
      await inNotificationCentre(() => ui("clickNotificationButton", { label: "Cancel" }));
      await done;
      await waitFor("the job to be cancelled", () => api.deferredJobs().find((j) => j.requestId === requestId)?.status === "cancelled");
      const res = await fetch(`${api.server!.url}/v1/chat/deferred-completion/${requestId}`, { headers: { authorization: `Bearer ${await api.token()}` } });
      await res.arrayBuffer();
      assert.equal(res.status, 404, "the server no longer has the job");
    },
  },
  {
    name: "deferred | the result opens read-only under acp-remote-deferred:, titled from the job, not as an Untitled buffer that asks to be saved; the view opens it again",
    fn: async () => {
      const result = nextResult();
      try {
        const done = Promise.resolve(vscode.commands.executeCommand(SUBMIT, { model: "fixture", prompt: "echo a read-only answer" }));
        const { document } = await withDeadline("the result document", result.shown);
        await done;
        assert.equal(document.uri.scheme, DEFERRED_RESULT_SCHEME);
        assert.equal(document.isUntitled, false);
        assert.equal(document.languageId, "markdown");
        const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
        assert.equal(tab?.label, "echo a read-only answer · fixture.md", "titled from the job");
        const text = document.getText();
        assert.match(text, /\na read-only answer\n/);
        // Read-only: what is typed into it is refused, and nothing is left to save.
        assert.equal(await typedInto(document, "typed "), text);
        assert.equal(document.isDirty, false);
        assert.equal(vscode.window.tabGroups.activeTabGroup.activeTab?.isDirty, false);
        // Closing asks nothing (a dialog would hold this command until answered).
        await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
        await waitFor("the result's tab to close", () => !vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === document.uri.toString())));
        // The server gave the result once; the view's Fetch result opens it again from the list.
        const again = nextResult();
        try {
          await vscode.commands.executeCommand(Command.deferredFetchResult, await job(requestIdOf(document.uri)));
          const reopened = await withDeadline("the result document again", again.shown);
          assert.equal(reopened.document.uri.toString(), document.uri.toString());
          assert.equal(reopened.document.getText(), text);
        } finally {
          again.dispose();
        }
      } finally {
        result.dispose();
      }
    },
  },
];
