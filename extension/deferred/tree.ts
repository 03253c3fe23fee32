// The "Deferred completions" view: the jobs this editor submitted, newest
// first, with their state. Ready ones carry the "Fetch result" action.
import * as vscode from "vscode";
import type { DeferredJobEntry, JobList, JobStatus } from "./job-list.ts";
import { DeferredCommand } from "./ids.ts";

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

function firstLine(text: string, max = 60): string {
  const line = text.split("\n").find((l) => l.trim().length > 0)?.trim() ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export class DeferredTree implements vscode.TreeDataProvider<DeferredJobEntry>, vscode.Disposable {
  readonly #jobs: JobList;
  readonly #onDidChange = new vscode.EventEmitter<DeferredJobEntry | undefined>();
  readonly onDidChangeTreeData = this.#onDidChange.event;
  readonly #subscription: { dispose(): void };

  constructor(jobs: JobList) {
    this.#jobs = jobs;
    this.#subscription = jobs.onDidChange(() => this.#onDidChange.fire(undefined));
  }

  getChildren(element?: DeferredJobEntry): DeferredJobEntry[] {
    return element ? [] : this.#jobs.all();
  }

  getTreeItem(job: DeferredJobEntry): vscode.TreeItem {
    const item = new vscode.TreeItem(firstLine(job.prompt) || job.requestId, vscode.TreeItemCollapsibleState.None);
    item.id = job.requestId;
    item.description = `${job.model} · ${LABEL[job.status]}`;
    item.iconPath = new vscode.ThemeIcon(ICON[job.status]);
    // menus match on this: view/item/context "viewItem == deferredJob.ready" etc.
    item.contextValue = `deferredJob.${job.status}`;
    const tooltip = new vscode.MarkdownString(undefined, true);
    tooltip.appendMarkdown(`**${job.model}** · ${LABEL[job.status]}\n\n`);
    tooltip.appendMarkdown(`submitted ${new Date(job.submittedAt).toLocaleString()} to ${job.serverUrl}\n\n`);
    tooltip.appendMarkdown(`request \`${job.requestId}\`\n\n`);
    if (job.error) tooltip.appendMarkdown(`error: ${job.error}\n\n`);
    tooltip.appendCodeblock(job.prompt.slice(0, 2000), "text");
    item.tooltip = tooltip;
    if (job.status === "ready" || job.status === "opened") {
      item.command = { command: DeferredCommand.fetchResult, title: "Fetch result", arguments: [job] };
    }
    return item;
  }

  dispose(): void {
    this.#subscription.dispose();
    this.#onDidChange.dispose();
  }
}
