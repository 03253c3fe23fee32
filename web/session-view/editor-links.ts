// What a card links to in the editor: a file at a line (a location, a diff's
// file) and a proposed change in VS Code's diff editor. The host says what it
// can open (SessionViewHost.openFile, .openDiff): on the phone, which opens
// neither, a path is plain text a person can select and copy, and no Open
// Diff button shows.
import type { PermissionRequestId, ProposedDiff } from "./api.ts";
import { el } from "./dom.ts";

/** What a card may ask of the host; each is absent where the host cannot do it. */
export interface CardActions {
  openFile?: (path: string, line?: number) => void;
  openDiff?: (diff: ProposedDiff, requestId?: PermissionRequestId) => void;
}

/** `text` (the path, with its line) for `path` at `line`: a link where the host opens files. */
export function pathElement(actions: CardActions, path: string, line: number | undefined, text = line === undefined ? path : `${path}:${line}`): HTMLElement {
  const open = actions.openFile;
  if (open === undefined) return el("span", { class: "sv-path" }, text);
  const link = el("button", { type: "button", class: "sv-path sv-path-link", title: line === undefined ? `Open ${path}` : `Open ${path} at line ${line}` }, text);
  link.addEventListener("click", () => open(path, line));
  return link;
}

/** The Open Diff button of a proposed change, or null where the host has no diff editor. */
export function openDiffButton(actions: CardActions, diff: ProposedDiff, requestId?: PermissionRequestId): HTMLElement | null {
  const open = actions.openDiff;
  if (open === undefined) return null;
  const button = el("button", { type: "button", class: "sv-open-diff", title: `Show the change to ${diff.path} in a diff editor` }, "Open Diff");
  button.addEventListener("click", () => open({ path: diff.path, oldText: diff.oldText, newText: diff.newText }, requestId));
  return button;
}
