// The "Deferred completions" view: the jobs this editor submitted, newest
// first, with their state (a pending one's as the sidecar tells it: queued,
// running, waiting for your permission). Ready ones carry the "Fetch result"
// action.
import * as vscode from "vscode";
import { Command } from "../command-ids.ts";
import type { DeferredJobEntry, JobList, JobStatus } from "./job-list.ts";
import { firstLine } from "./render.ts";

const ICON: Record<JobStatus, string> = {
  pending: "loading~spin",
  ready: "pass-filled",
  opened: "check",
  failed: "error",
  gone: "circle-slash",
  cancelled: "debug-stop",
};

const LABEL: Record<JobStatus, string> = {
  pending: "pending",
  ready: "ready",
  opened: "fetched",
  failed: "failed",
  gone: "expired or fetched elsewhere",
  cancelled: "cancelled",
};

export class DeferredTree implements vscode.TreeDataProvider<DeferredJobEntry>, vscode.Disposable {
  readonly #jobs: JobList;
  readonly #onDidChange = new vscode.EventEmitter<DeferredJobEntry | undefined>();
  readonly onDidChangeTreeData = this.#onDidChange.event;
  readonly #subscriptions: Array<{ dispose(): void }>;
  readonly #pendingLabel: (job: DeferredJobEntry) => string;

  /** `pendingLabel` says what a pending job waits on; `pendingChanged` fires when that may have changed. */
  constructor(jobs: JobList, pendingLabel: (job: DeferredJobEntry) => string, pendingChanged: vscode.Event<unknown>) {
    this.#jobs = jobs;
    this.#pendingLabel = pendingLabel;
    this.#subscriptions = [jobs.onDidChange(() => this.#onDidChange.fire(undefined)), pendingChanged(() => this.#onDidChange.fire(undefined))];
  }

  getChildren(element?: DeferredJobEntry): DeferredJobEntry[] {
    return element ? [] : this.#jobs.all();
  }

  getTreeItem(job: DeferredJobEntry): vscode.TreeItem {
    const item = new vscode.TreeItem(firstLine(job.prompt) || job.requestId, vscode.TreeItemCollapsibleState.None);
    item.id = job.requestId;
    const label = job.status === "pending" ? this.#pendingLabel(job) : LABEL[job.status];
    item.description = `${job.model} · ${label}`;
    item.iconPath = new vscode.ThemeIcon(ICON[job.status]);
    // menus match on this: view/item/context "viewItem == deferredJob.ready" etc.
    item.contextValue = `deferredJob.${job.status}`;
    const tooltip = new vscode.MarkdownString(undefined, true);
    tooltip.appendMarkdown(`**${job.model}** · ${label}\n\n`);
    tooltip.appendMarkdown(`submitted ${new Date(job.submittedAt).toLocaleString()} to ${job.serverUrl}\n\n`);
    tooltip.appendMarkdown(`request \`${job.requestId}\`\n\n`);
    if (job.error) tooltip.appendMarkdown(`error: ${job.error}\n\n`);
    tooltip.appendCodeblock(job.prompt.slice(0, 2000), "text");
    item.tooltip = tooltip;
    if (job.status === "ready" || job.status === "opened") {
      item.command = { command: Command.deferredFetchResult, title: "Fetch result", arguments: [job] };
    }
    return item;
  }

  dispose(): void {
    for (const s of this.#subscriptions) s.dispose();
    this.#onDidChange.dispose();
  }
}
