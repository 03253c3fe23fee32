// The two sides of a proposed change as read-only documents of our own scheme,
// for VS Code's diff editor: `acp-remote-diff:<the file's path>?review=<n>&side=old|new`.
// The path keeps the file's name (the editor's language and icon follow it);
// the query names the change. A content provider's documents cannot be
// edited or saved, which is what a proposal is: the agent writes the file
// once the request is allowed, through its own tools.
import * as vscode from "vscode";
import { DEFAULT_DIFF_REVIEWS_KEPT } from "../limits.ts";

export const DIFF_SCHEME = "acp-remote-diff";

export type DiffSide = "old" | "new";

/** A proposed change: the file, its text before (null: a new file) and after, and the permission request that asks about it. */
export interface Review {
  path: string;
  oldText: string | null;
  newText: string;
  permissionId?: string;
}

export class DiffDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  /** Insertion-ordered: the oldest goes first when the bound is reached. */
  readonly #reviews = new Map<number, Review>();
  /** The same change opened again is the same documents (one diff editor, not one more each time). */
  readonly #ids = new Map<string, number>();
  #next = 0;
  readonly #registration: vscode.Disposable;

  constructor() {
    this.#registration = vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, this);
  }

  /** The left and right documents of a change. */
  add(review: Review): { left: vscode.Uri; right: vscode.Uri } {
    const key = JSON.stringify([review.permissionId ?? null, review.path, review.oldText, review.newText]);
    let id = this.#ids.get(key);
    if (id === undefined || !this.#reviews.has(id)) {
      id = ++this.#next;
      this.#ids.set(key, id);
      this.#reviews.set(id, review);
      while (this.#reviews.size > DEFAULT_DIFF_REVIEWS_KEPT) {
        const oldest = this.#reviews.keys().next().value!;
        this.#reviews.delete(oldest);
        for (const [k, v] of this.#ids) if (v === oldest) this.#ids.delete(k);
      }
    }
    return { left: this.#uri(review.path, id, "old"), right: this.#uri(review.path, id, "new") };
  }

  /** The change a document of ours shows, if it is still kept. */
  reviewOf(uri: vscode.Uri): Review | undefined {
    if (uri.scheme !== DIFF_SCHEME) return undefined;
    return this.#reviews.get(Number(new URLSearchParams(uri.query).get("review")));
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const review = this.reviewOf(uri);
    if (review === undefined) return "";
    return new URLSearchParams(uri.query).get("side") === "old" ? (review.oldText ?? "") : review.newText;
  }

  #uri(path: string, id: number, side: DiffSide): vscode.Uri {
    return vscode.Uri.file(path).with({ scheme: DIFF_SCHEME, query: `review=${id}&side=${side}` });
  }

  dispose(): void {
    this.#registration.dispose();
    this.#reviews.clear();
    this.#ids.clear();
  }
}
