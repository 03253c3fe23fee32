// Host requests may touch only what is inside the workspace folders: the
// agent acts for a remote person, and the editor's workspace is what the
// local person agreed to share. The rule itself is the sidecar's too
// (common/confine.ts): symlinks are resolved before the comparison.
import * as vscode from "vscode";
import { confinedPath, type PathUse } from "./confined-path.ts";

/** The workspace folders on disk. */
function workspaceRoots(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
}

/** The real path, when it lies inside a workspace folder; a JSON-RPC error otherwise. */
export function workspacePath(path: unknown, use: PathUse, what = "path"): Promise<string> {
  return confinedPath(path, workspaceRoots(), use, what);
}
