// Deferred completions from the editor: the "Submit deferred completion"
// command (model from /v1/models, prompt from the selection or an input box),
// a cancellable progress notification that says what the job waits on, the
// result opened as a read-only Markdown document, and the "Deferred
// completions" view of the jobs this editor submitted.
//
// Nothing polls: the sidecar tells the editor each change of its person's
// jobs on the control connection (acpRemote/deferred/changed), and the
// result is fetched (the one GET the server answers with it) as soon as a job
// is done. What may have been missed while no sidecar was there to tell it is
// asked for once, when the server is (back) up.
import * as vscode from "vscode";
import type { DeferredJobEvent, PermissionInfo } from "../../protocol/control.ts";
import { Command } from "../command-ids.ts";
import { permissionTitle } from "../permissions/permission-center.ts";
import { DeferredApi, DeferredApiError, type CompletionResult, type FetchOutcome, type ServerAddress } from "./api.ts";
import { DEFERRED_VIEW_ID } from "./ids.ts";
import { JobList, type DeferredJobEntry } from "./job-list.ts";
import { ResultDocuments } from "./result-document.ts";
import { DeferredTree } from "./tree.ts";
import { waitLabel, waitMessage, type JobWait } from "./wait-text.ts";

export { DEFERRED_VIEW_ID } from "./ids.ts";

export interface DeferredServer {
  /** The running sidecar's base URL and access token, or undefined while it is not running. */
  current(): ServerAddress | undefined;
  onDidChange: vscode.Event<void>;
  /** The sidecar's last word on job `requestId` since it started, if any. */
  jobState(requestId: string): DeferredJobEvent | undefined;
  /** A job of the editor's person changed state. */
  onDidChangeJob: vscode.Event<DeferredJobEvent>;
  /** The permission request job `requestId`'s run waits on, when the editor was asked one. */
  waitingPermission(requestId: string): PermissionInfo | undefined;
  onDidChangePermissions: vscode.Event<void>;
}

/** The part of the feature the extension's API shows: the jobs as the view lists them. */
export interface DeferredFeature extends vscode.Disposable {
  jobs(): DeferredJobEntry[];
}

/** `acpRemote.submitDeferredCompletion`'s arguments (a keybinding's `args`): what it would otherwise ask. */
interface SubmitArgs {
  model?: unknown;
  prompt?: unknown;
}

function describe(error: unknown): string {
  if (error instanceof DeferredApiError) return `${error.message} (HTTP ${error.status})`;
  return error instanceof Error ? error.message : String(error);
}

export function activateDeferred(context: vscode.ExtensionContext, server: DeferredServer): DeferredFeature {
  const jobs = new JobList(context.globalState);
  const results = new ResultDocuments(jobs);
  /** Jobs a progress notification waits for: their result opens at once. */
  const foreground = new Set<string>();
  /** Jobs with a GET or a DELETE in flight: what the server says meanwhile is their own doing. */
  const busy = new Set<string>();

  function waitOf(job: DeferredJobEntry): JobWait {
    const permission = server.waitingPermission(job.requestId);
    return {
      model: job.model,
      state: server.jobState(job.requestId)?.state,
      ...(permission ? { permission: { agent: permission.agent, title: permissionTitle(permission) } } : {}),
      ...(server.current() ? {} : { serverDown: true }),
    };
  }

  const tree = new DeferredTree(jobs, (job) => waitLabel(waitOf(job)), (listener) =>
    vscode.Disposable.from(server.onDidChangeJob(listener), server.onDidChangePermissions(listener), server.onDidChange(listener)),
  );

  async function openResult(job: DeferredJobEntry, result: CompletionResult): Promise<void> {
    // Kept before it is shown: the server gave it out once, and the view opens it again from here.
    const kept = await jobs.update(job.requestId, { status: "opened", result });
    if (kept) await results.open(kept);
  }

  /** Records what a GET said; opens a result when `open`. */
  async function settle(job: DeferredJobEntry, outcome: Exclude<FetchOutcome, { kind: "pending" }>, open: boolean): Promise<void> {
    if (outcome.kind === "ready") {
      if (open) return openResult(job, outcome.completion);
      await jobs.update(job.requestId, { status: "ready", result: outcome.completion });
      // Not awaited: a notification nobody answers must not hold anything up.
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
      `ACP Remote: the server no longer has the deferred completion ${job.requestId} (expired after 24 hours, cancelled, or fetched elsewhere).`,
    );
  }

  /**
   * One GET of a pending job, unless one is in flight: the result (taken,
   * kept, and opened when a notification waits for it), its failure, or its
   * absence; a 202 changes nothing.
   */
  async function fetchAndSettle(requestId: string): Promise<void> {
    const job = jobs.get(requestId);
    const address = server.current();
    if (!job || job.status !== "pending" || busy.has(requestId) || !address) return;
    busy.add(requestId);
    try {
      const outcome = await new DeferredApi(address).fetchOnce(requestId);
      if (outcome.kind !== "pending") await settle(job, outcome, foreground.has(requestId));
    } catch (error) {
      void vscode.window.showErrorMessage(`ACP Remote: fetching the deferred completion on ${job.model} failed: ${describe(error)}`, "Retry").then((choice) => {
        if (choice === "Retry") void fetchAndSettle(requestId);
      });
    } finally {
      busy.delete(requestId);
    }
  }

  /** The sidecar's word on a job: finished or gone, it is fetched now. */
  async function onJobEvent(event: DeferredJobEvent): Promise<void> {
    const job = jobs.get(event.requestId);
    if (!job || job.status !== "pending") return;
    if (event.state === "done" || event.state === "failed") {
      await jobs.update(job.requestId, { finishedAt: event.at });
      await fetchAndSettle(job.requestId);
    } else if (event.state === "deleted") {
      // Cancelled or expired (a GET of ours is in flight otherwise): the GET says 404.
      await fetchAndSettle(job.requestId);
    }
  }

  /** Once per server start (and on request): what finished while nobody could be told. */
  async function recheck(): Promise<void> {
    for (const job of jobs.all()) if (job.status === "pending") await fetchAndSettle(job.requestId);
  }

  function requireServer(): ServerAddress | undefined {
    const address = server.current();
    if (address) return address;
    void vscode.window.showWarningMessage("ACP Remote: the server is not running.", "Start Server").then((choice) => {
      if (choice === "Start Server") void vscode.commands.executeCommand(Command.start);
    });
    return undefined;
  }

  async function pickModel(api: DeferredApi): Promise<string | undefined> {
    let models;
    try {
      models = await api.models();
    } catch (error) {
      void vscode.window.showErrorMessage(`ACP Remote: could not list the models: ${describe(error)}`);
      return undefined;
    }
    if (models.length === 0) {
      void vscode.window.showWarningMessage("ACP Remote: the server offers no models. Configure an agent (acpRemote.agents).");
      return undefined;
    }
    const picked = await vscode.window.showQuickPick(
      models.map((m) => ({ label: m.id, description: m.owned_by === "acp-remote" ? "workspace agent" : m.owned_by })),
      { title: "Submit deferred completion: model", placeHolder: "The agent or upstream model that answers" },
    );
    return picked?.label;
  }

  async function askPrompt(model: string): Promise<string | undefined> {
    const editor = vscode.window.activeTextEditor;
    const selection = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : "";
    if (selection.trim().length > 0) return selection;
    return vscode.window.showInputBox({
      title: `Submit deferred completion: prompt for ${model}`,
      prompt: "The message to send. Select text in an editor first to send the selection instead.",
      ignoreFocusOut: true,
      validateInput: (value) => (value.trim().length === 0 ? "Enter a prompt" : undefined),
    });
  }

  async function submit(args?: SubmitArgs): Promise<void> {
    const address = requireServer();
    if (!address) return;
    const api = new DeferredApi(address);
    const model = typeof args?.model === "string" && args.model.length > 0 ? args.model : await pickModel(api);
    if (model === undefined) return;
    const prompt = typeof args?.prompt === "string" ? args.prompt : await askPrompt(model);
    if (prompt === undefined || prompt.trim().length === 0) return;
    let requestId: string;
    try {
      requestId = await api.submit(model, prompt);
    } catch (error) {
      void vscode.window.showErrorMessage(`ACP Remote: the submission failed: ${describe(error)}`);
      return;
    }
    // Before the job is listed: an event that comes at once opens its result instead of announcing it.
    foreground.add(requestId);
    try {
      await jobs.add({ requestId, model, prompt, serverUrl: address.url, submittedAt: Date.now(), status: "pending" });
      await waitInForeground(requestId);
    } finally {
      foreground.delete(requestId);
    }
  }

  /**
   * A cancellable progress notification that says what the job waits on,
   * until its result is opened (or it failed, or is gone). Cancel cancels the
   * job on the server.
   */
  async function waitInForeground(requestId: string): Promise<void> {
    const job = jobs.get(requestId);
    if (!job) return;
    const cancelled = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `ACP Remote: deferred completion on ${job.model}`, cancellable: true },
      (progress, token) =>
        new Promise<boolean>((resolve) => {
          let told = "";
          const subscriptions: vscode.Disposable[] = [];
          const finish = (cancel: boolean): void => {
            for (const s of subscriptions.splice(0)) s.dispose();
            resolve(cancel);
          };
          const tell = (): void => {
            const now = jobs.get(requestId);
            if (now?.status !== "pending") return finish(false);
            const message = waitMessage(waitOf(now));
            if (message === told) return;
            told = message;
            progress.report({ message });
          };
          subscriptions.push(
            jobs.onDidChange(tell),
            server.onDidChangeJob((e) => e.requestId === requestId && tell()),
            server.onDidChangePermissions(tell),
            server.onDidChange(tell),
            token.onCancellationRequested(() => finish(true)),
          );
          tell();
          // Told before the POST had its answer (a quick job): act on it now.
          const heard = server.jobState(requestId);
          if (heard) void onJobEvent(heard);
        }),
    );
    if (cancelled) await cancel(jobs.get(requestId));
  }

  async function fetchResult(job?: DeferredJobEntry): Promise<void> {
    const target = job ? jobs.get(job.requestId) : undefined;
    if (!target) return;
    if (target.result) return openResult(target, target.result);
    if (target.status !== "pending" || !requireServer()) return;
    foreground.add(target.requestId);
    try {
      await fetchAndSettle(target.requestId);
    } finally {
      foreground.delete(target.requestId);
    }
    if (jobs.get(target.requestId)?.status === "pending") {
      void vscode.window.showInformationMessage(`ACP Remote: the completion on ${target.model} is not ready yet.`);
    }
  }

  /** DELETE on the server; what it does not allow (the server is down, the result is being fetched) is said. */
  async function cancel(job?: DeferredJobEntry): Promise<void> {
    const target = job ? jobs.get(job.requestId) : undefined;
    if (!target || target.status !== "pending") return;
    const keepsRunning = (why: string): void =>
      void vscode.window.showWarningMessage(
        `ACP Remote: the deferred completion on ${target.model} was not cancelled (${why}); it keeps running on the server, and its result appears in the Deferred completions view.`,
      );
    const address = server.current();
    if (!address) return keepsRunning("the server is not running");
    // Finished and being fetched: cancelling now would throw the result away.
    if (busy.has(target.requestId)) return;
    busy.add(target.requestId);
    try {
      const removed = await new DeferredApi(address).cancel(target.requestId);
      await jobs.update(target.requestId, { status: removed ? "cancelled" : "gone" });
    } catch (error) {
      keepsRunning(describe(error));
    } finally {
      busy.delete(target.requestId);
    }
  }

  const disposables: vscode.Disposable[] = [
    tree,
    results,
    vscode.window.createTreeView(DEFERRED_VIEW_ID, { treeDataProvider: tree }),
    vscode.commands.registerCommand(Command.submitDeferredCompletion, submit),
    vscode.commands.registerCommand(Command.deferredFetchResult, fetchResult),
    vscode.commands.registerCommand(Command.deferredCancel, cancel),
    vscode.commands.registerCommand(Command.deferredForget, (job?: DeferredJobEntry) => (job ? jobs.remove(job.requestId) : undefined)),
    vscode.commands.registerCommand(Command.deferredRefresh, recheck),
    server.onDidChangeJob((event) => void onJobEvent(event)),
    server.onDidChange(() => void recheck()),
  ];
  void recheck();
  const all = vscode.Disposable.from(...disposables);
  context.subscriptions.push(all);
  return { jobs: () => jobs.all(), dispose: () => all.dispose() };
}
