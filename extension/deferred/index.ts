// Deferred completions from the editor: the "Submit deferred completion"
// command (model from /v1/models, prompt from the selection or an input box,
// polled with backoff under a cancellable progress notification, the result
// opened as Markdown) and the "Deferred completions" view of the jobs this
// editor submitted.
import * as vscode from "vscode";
import { DeferredApi, DeferredApiError, type CompletionResult, type FetchOutcome, type ServerAddress } from "./api.ts";
import { backoffDelays, pollUntilSettled } from "./backoff.ts";
import { DEFERRED_VIEW_ID, DeferredCommand, START_SERVER_COMMAND } from "./ids.ts";
import { JobList, type DeferredJobEntry } from "./job-list.ts";
import { renderCompletion } from "./render.ts";
import { DeferredTree } from "./tree.ts";

export { DEFERRED_VIEW_ID, DeferredCommand } from "./ids.ts";

export interface DeferredServer {
  /** The running sidecar's base URL and access token, or undefined while it is not running. */
  current(): ServerAddress | undefined;
  onDidChange: vscode.Event<void>;
}

function describe(error: unknown): string {
  if (error instanceof DeferredApiError) return `${error.message} (HTTP ${error.status})`;
  return error instanceof Error ? error.message : String(error);
}

export function activateDeferred(context: vscode.ExtensionContext, server: DeferredServer): vscode.Disposable {
  const jobs = new JobList(context.globalState);
  const tree = new DeferredTree(jobs);
  /** Jobs a progress notification is polling; the background watcher leaves them alone. */
  const foreground = new Set<string>();

  async function openResult(job: DeferredJobEntry, result: CompletionResult): Promise<void> {
    const document = await vscode.workspace.openTextDocument({ language: "markdown", content: renderCompletion(result, job.prompt) });
    await vscode.window.showTextDocument(document, { preview: false });
    await jobs.update(job.requestId, { status: "opened", result });
  }

  /** Records what a GET said; opens a result when `open`. */
  async function settle(job: DeferredJobEntry, outcome: Exclude<FetchOutcome, { kind: "pending" }>, open: boolean): Promise<void> {
    if (outcome.kind === "ready") {
      if (open) return openResult(job, outcome.completion);
      await jobs.update(job.requestId, { status: "ready", result: outcome.completion });
      // Not awaited: a notification nobody answers must not hold up the watcher.
      void vscode.window.showInformationMessage(`ACP Remote: the deferred completion on ${job.model} is ready.`, "Open").then((choice) => {
        if (choice === "Open") void openResult(job, outcome.completion);
      });
      return;
    }
    if (outcome.kind === "failed") {
      await jobs.update(job.requestId, { status: "failed", error: `${outcome.message} (HTTP ${outcome.status})` });
      void vscode.window.showErrorMessage(`ACP Remote: the deferred completion on ${job.model} failed: ${outcome.message}`);
      return;
    }
    await jobs.update(job.requestId, { status: "gone" });
    void vscode.window.showWarningMessage(
      `ACP Remote: the server no longer has the deferred completion ${job.requestId} (expired after 24 hours, or fetched elsewhere).`,
    );
  }

  function requireServer(): ServerAddress | undefined {
    const address = server.current();
    if (address) return address;
    void vscode.window.showWarningMessage("ACP Remote: the server is not running.", "Start Server").then((choice) => {
      if (choice === "Start Server") void vscode.commands.executeCommand(START_SERVER_COMMAND);
    });
    return undefined;
  }

  async function submit(): Promise<void> {
    const address = requireServer();
    if (!address) return;
    const api = new DeferredApi(address);
    let models;
    try {
      models = await api.models();
    } catch (error) {
      void vscode.window.showErrorMessage(`ACP Remote: could not list the models: ${describe(error)}`);
      return;
    }
    if (models.length === 0) {
      void vscode.window.showWarningMessage("ACP Remote: the server offers no models. Configure an agent (acpRemote.agents).");
      return;
    }
    const picked = await vscode.window.showQuickPick(
      models.map((m) => ({ label: m.id, description: m.owned_by === "acp-remote" ? "workspace agent" : m.owned_by })),
      { title: "Submit deferred completion: model", placeHolder: "The agent or upstream model that answers" },
    );
    if (!picked) return;
    const editor = vscode.window.activeTextEditor;
    const selection = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : "";
    const prompt =
      selection.trim().length > 0
        ? selection
        : await vscode.window.showInputBox({
            title: `Submit deferred completion: prompt for ${picked.label}`,
            prompt: "The message to send. Select text in an editor first to send the selection instead.",
            ignoreFocusOut: true,
            validateInput: (value) => (value.trim().length === 0 ? "Enter a prompt" : undefined),
          });
    if (prompt === undefined || prompt.trim().length === 0) return;
    let requestId: string;
    try {
      requestId = await api.submit(picked.label, prompt);
    } catch (error) {
      void vscode.window.showErrorMessage(`ACP Remote: the submission failed: ${describe(error)}`);
      return;
    }
    const job: DeferredJobEntry = { requestId, model: picked.label, prompt, serverUrl: address.url, submittedAt: Date.now(), status: "pending" };
    await jobs.add(job);
    await waitInForeground(api, job);
  }

  /** Polls under a cancellable notification; cancelling leaves the job to the background watcher. */
  async function waitInForeground(api: DeferredApi, job: DeferredJobEntry): Promise<void> {
    foreground.add(job.requestId);
    try {
      const outcome = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Deferred completion on ${job.model}`, cancellable: true },
        async (progress, token) => {
          const controller = new AbortController();
          const cancel = token.onCancellationRequested(() => controller.abort(new vscode.CancellationError()));
          try {
            return await pollUntilSettled(() => api.fetchOnce(job.requestId), controller.signal, {
              onWait: (ms) => progress.report({ message: `waiting for the result (next check in ${Math.round(ms / 1000)} s)` }),
            });
          } catch (error) {
            if (controller.signal.aborted) return undefined;
            throw error;
          } finally {
            cancel.dispose();
          }
        },
      );
      if (outcome === undefined) {
        void vscode.window.showInformationMessage(
          "ACP Remote: the completion keeps running on the server; its result appears in the Deferred completions view.",
        );
        watcher.kick();
        return;
      }
      await settle(job, outcome, true);
    } catch (error) {
      void vscode.window.showErrorMessage(`ACP Remote: polling the deferred completion failed: ${describe(error)}`);
      watcher.kick();
    } finally {
      foreground.delete(job.requestId);
    }
  }

  /**
   * Polls the pending jobs nobody waits for, with the same backoff, while the
   * server runs. A GET consumes a ready result, so it is kept in the list.
   */
  const watcher = (() => {
    let timer: NodeJS.Timeout | undefined;
    let delays = backoffDelays();
    let running = false;
    const schedule = (): void => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      const pending = jobs.all().some((j) => j.status === "pending" && !foreground.has(j.requestId));
      if (!pending || !server.current()) return;
      timer = setTimeout(() => void tick(), delays.next().value);
    };
    const tick = async (): Promise<void> => {
      if (running) return;
      running = true;
      const address = server.current();
      try {
        if (!address) return;
        const api = new DeferredApi(address);
        for (const job of jobs.all().filter((j) => j.status === "pending" && !foreground.has(j.requestId))) {
          const outcome = await api.fetchOnce(job.requestId).catch(() => undefined);
          if (outcome && outcome.kind !== "pending") await settle(job, outcome, false);
        }
      } finally {
        running = false;
        schedule();
      }
    };
    return {
      /** Starts over from the shortest delay (a new job, a server that came up). */
      kick(): void {
        delays = backoffDelays();
        schedule();
      },
      dispose(): void {
        if (timer) clearTimeout(timer);
      },
    };
  })();

  async function fetchResult(job?: DeferredJobEntry): Promise<void> {
    const target = job ? jobs.get(job.requestId) : undefined;
    if (!target) return;
    if (target.result) return openResult(target, target.result);
    if (target.status !== "pending") return;
    const address = requireServer();
    if (!address) return;
    try {
      const outcome = await new DeferredApi(address).fetchOnce(target.requestId);
      if (outcome.kind === "pending") {
        void vscode.window.showInformationMessage(`ACP Remote: the completion on ${target.model} is not ready yet.`);
        return;
      }
      await settle(target, outcome, true);
    } catch (error) {
      void vscode.window.showErrorMessage(`ACP Remote: fetching the result failed: ${describe(error)}`);
    }
  }

  async function cancel(job?: DeferredJobEntry): Promise<void> {
    const target = job ? jobs.get(job.requestId) : undefined;
    if (!target || target.status !== "pending") return;
    const address = requireServer();
    if (!address) return;
    try {
      await new DeferredApi(address).cancel(target.requestId);
      await jobs.update(target.requestId, { status: "cancelled" });
    } catch (error) {
      void vscode.window.showErrorMessage(`ACP Remote: cancelling failed: ${describe(error)}`);
    }
  }

  const disposables: vscode.Disposable[] = [
    tree,
    vscode.window.createTreeView(DEFERRED_VIEW_ID, { treeDataProvider: tree }),
    vscode.commands.registerCommand(DeferredCommand.submit, submit),
    vscode.commands.registerCommand(DeferredCommand.fetchResult, fetchResult),
    vscode.commands.registerCommand(DeferredCommand.cancel, cancel),
    vscode.commands.registerCommand(DeferredCommand.forget, (job?: DeferredJobEntry) => (job ? jobs.remove(job.requestId) : undefined)),
    vscode.commands.registerCommand(DeferredCommand.refresh, () => watcher.kick()),
    server.onDidChange(() => watcher.kick()),
    watcher,
  ];
  watcher.kick();
  const all = vscode.Disposable.from(...disposables);
  context.subscriptions.push(all);
  return all;
}
