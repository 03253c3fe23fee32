// A line diff for tool call diffs: common head and tail trimmed, the changed
// middle aligned by longest common subsequence when small enough
// (DEFAULT_DIFF_MAX_CELLS), otherwise shown as removed then added.
import type { PermissionRequestId, ProposedDiff } from "./api.ts";
import { el } from "./dom.ts";
import { type CardActions, openDiffButton, pathElement } from "./editor-links.ts";
import { DEFAULT_DIFF_MAX_CELLS, DEFAULT_DIFF_MAX_LINES } from "./limits.ts";

export type DiffLine = { op: " " | "-" | "+"; text: string };

function lineDiff(oldText: string, newText: string): DiffLine[] {
  const a = oldText === "" ? [] : oldText.split("\n");
  const b = newText === "" ? [] : newText.split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ op: " ", text }));
  if (midA.length * midB.length > DEFAULT_DIFF_MAX_CELLS) {
    for (const text of midA) out.push({ op: "-", text });
    for (const text of midB) out.push({ op: "+", text });
  } else {
    out.push(...alignMiddle(midA, midB));
  }
  for (const text of a.slice(a.length - tail)) out.push({ op: " ", text });
  return out;
}

function alignMiddle(a: string[], b: string[]): DiffLine[] {
  const n = a.length;
  const m = b.length;
  // lcs[i][j] = length of the LCS of a[i..] and b[j..], row-major in one array.
  const lcs = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * (m + 1) + j] = a[i] === b[j] ? lcs[(i + 1) * (m + 1) + j + 1]! + 1 : Math.max(lcs[(i + 1) * (m + 1) + j]!, lcs[i * (m + 1) + j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ op: " ", text: a[i]! });
      i++;
      j++;
    } else if (lcs[(i + 1) * (m + 1) + j]! >= lcs[i * (m + 1) + j + 1]!) {
      out.push({ op: "-", text: a[i++]! });
    } else {
      out.push({ op: "+", text: b[j++]! });
    }
  }
  while (i < n) out.push({ op: "-", text: a[i++]! });
  while (j < m) out.push({ op: "+", text: b[j++]! });
  return out;
}

const OP_CLASS = { " ": "sv-same", "-": "sv-del", "+": "sv-add" } as const;
const OP_LABEL = { " ": "unchanged", "-": "removed", "+": "added" } as const;

/**
 * A diff of one file: its path (a link to the file in the editor), an Open
 * Diff button where the host has a diff editor, then its lines (at most
 * DEFAULT_DIFF_MAX_LINES). `requestId` names the open permission request the
 * change belongs to, whose answers the diff editor then offers.
 */
export function renderDiff(diff: Omit<ProposedDiff, "oldText"> & { oldText?: string | null | undefined }, actions: CardActions, requestId?: PermissionRequestId): HTMLElement {
  const { path, newText } = diff;
  const oldText = diff.oldText ?? null;
  const lines = lineDiff(oldText ?? "", newText);
  const pre = el("pre", { class: "sv-diff-lines" });
  for (const line of lines.slice(0, DEFAULT_DIFF_MAX_LINES)) {
    pre.append(el("span", { class: OP_CLASS[line.op], title: OP_LABEL[line.op] }, `${line.op} ${line.text}\n`));
  }
  const rest = lines.length - DEFAULT_DIFF_MAX_LINES;
  // A new file is not there to open yet: its path is text, and Open Diff shows it.
  const file = oldText === null ? el("span", { class: "sv-path" }, path) : pathElement(actions, path, undefined);
  return el(
    "figure",
    { class: "sv-diff", "data-path": path },
    el("figcaption", { class: "sv-diff-head" }, el("span", { class: "sv-diff-label" }, oldText === null ? "New file" : "Diff"), " ", file, openDiffButton(actions, { path, oldText, newText }, requestId)),
    pre,
    rest > 0 ? el("div", { class: "sv-muted" }, `… ${rest} more lines`) : null,
  );
}
