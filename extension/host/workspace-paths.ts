// Host requests may touch only what is inside the workspace folders: the
// agent acts for a remote person, and the editor's workspace is what the
// local person agreed to share.
import { isAbsolute, relative, resolve } from "node:path";
import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node";

/** JSON-RPC error codes of host requests (ACP's where ACP has one). */
export const HostErrorCode = {
  InvalidParams: -32602,
  InternalError: -32603,
  /** ACP: the resource (file, terminal) does not exist. */
  ResourceNotFound: -32002,
} as const;

function inside(folder: string, path: string): boolean {
  const rel = relative(folder, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** The absolute path, when it lies inside a workspace folder; a JSON-RPC error otherwise. */
export function workspacePath(path: unknown, what = "path"): string {
  if (typeof path !== "string" || !isAbsolute(path)) {
    throw new ResponseError(HostErrorCode.InvalidParams, `${what} must be an absolute path`);
  }
  const resolved = resolve(path);
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (!folders.some((f) => f.uri.scheme === "file" && inside(f.uri.fsPath, resolved))) {
    throw new ResponseError(HostErrorCode.InvalidParams, `${what} ${resolved} is outside the workspace folders`);
  }
  return resolved;
}
