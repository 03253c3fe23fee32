// A job's result as a read-only Markdown document of our own scheme
// (`acp-remote-deferred:/<request_id>/<title>.md`), drawn from the result the
// job list keeps: never an untitled buffer that asks to be saved when closed,
// and it opens again from the Deferred completions view, since the server
// hands a result out only once.
import * as vscode from "vscode";
import { DEFERRED_RESULT_SCHEME } from "./ids.ts";
import type { DeferredJobEntry, JobList } from "./job-list.ts";
import { renderCompletion, resultFileName } from "./render.ts";

export class ResultDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  readonly #jobs: JobList;
  readonly #registration: vscode.Disposable;

  constructor(jobs: JobList) {
    this.#jobs = jobs;
    this.#registration = vscode.workspace.registerTextDocumentContentProvider(DEFERRED_RESULT_SCHEME, this);
  }

  uri(job: Pick<DeferredJobEntry, "requestId" | "prompt" | "model">): vscode.Uri {
    return vscode.Uri.from({ scheme: DEFERRED_RESULT_SCHEME, path: `/${encodeURIComponent(job.requestId)}/${resultFileName(job)}` });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const requestId = decodeURIComponent(uri.path.split("/")[1] ?? "");
    const job = this.#jobs.get(requestId);
    if (!job?.result) return `_The result of the deferred completion \`${requestId}\` is no longer kept: it was removed from the Deferred completions view._\n`;
    return renderCompletion(job.result, job.prompt);
  }

  /** Opens job's result in a tab of its own (not a preview tab, which the next file opened would replace). */
  async open(job: DeferredJobEntry): Promise<void> {
    const document = await vscode.workspace.openTextDocument(this.uri(job));
    await vscode.window.showTextDocument(document, { preview: false });
  }

  dispose(): void {
    this.#registration.dispose();
  }
}
