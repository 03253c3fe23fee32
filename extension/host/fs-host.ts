// `fs/read_text_file` and `fs/write_text_file` served by the editor: reads see
// unsaved edits of open documents; writes are WorkspaceEdits, so the person
// can undo them like their own.
import { readFile } from "node:fs/promises";
import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node";
import type { ReadTextFileRequest, ReadTextFileResponse, WriteTextFileRequest, WriteTextFileResponse } from "@agentclientprotocol/sdk";
import { DEFAULT_MAX_READ_FILE_BYTES } from "../../protocol/host-limits.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { workspacePath } from "./workspace-paths.ts";

function openDocument(path: string): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((d) => d.uri.scheme === "file" && d.uri.fsPath === path);
}

/** ACP `line` is 1-based; `limit` counts lines. */
function sliceLines(text: string, line: number | null | undefined, limit: number | null | undefined): string {
  if ((line === undefined || line === null) && (limit === undefined || limit === null)) return text;
  const lines = text.split("\n");
  const start = Math.max(0, (line ?? 1) - 1);
  const end = limit === undefined || limit === null ? lines.length : start + Math.max(0, limit);
  return lines.slice(start, end).join("\n");
}

export async function readTextFile(params: ReadTextFileRequest): Promise<ReadTextFileResponse> {
  const path = await workspacePath(params?.path, "existing");
  const doc = openDocument(path);
  let text: string;
  if (doc) {
    text = doc.getText();
  } else {
    try {
      const buffer = await readFile(path);
      if (buffer.byteLength > DEFAULT_MAX_READ_FILE_BYTES) {
        throw new ResponseError(ErrorCode.InvalidParams, `${path} is larger than ${DEFAULT_MAX_READ_FILE_BYTES} bytes`);
      }
      text = buffer.toString("utf8");
    } catch (err) {
      if (err instanceof ResponseError) throw err;
      if ((err as NodeJS.ErrnoException).code === "ENOENT") throw new ResponseError(ErrorCode.ResourceNotFound, `${path} does not exist`);
      throw new ResponseError(ErrorCode.InternalError, `cannot read ${path}: ${(err as Error).message}`);
    }
  }
  return { content: sliceLines(text, params.line, params.limit) };
}

export async function writeTextFile(params: WriteTextFileRequest): Promise<WriteTextFileResponse> {
  const path = await workspacePath(params?.path, "new");
  if (typeof params.content !== "string") throw new ResponseError(ErrorCode.InvalidParams, "content must be a string");
  const uri = vscode.Uri.file(path);
  const edit = new vscode.WorkspaceEdit();
  let exists = true;
  try {
    await vscode.workspace.fs.stat(uri);
  } catch {
    exists = false;
  }
  if (exists) {
    const doc = await vscode.workspace.openTextDocument(uri);
    edit.replace(uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), params.content);
  } else {
    edit.createFile(uri, { ignoreIfExists: true });
    edit.insert(uri, new vscode.Position(0, 0), params.content);
  }
  const applied = await vscode.workspace.applyEdit(edit, { isRefactoring: false });
  if (!applied) throw new ResponseError(ErrorCode.InternalError, `the editor refused the edit of ${path}`);
  // The agent reads the disk next (a test run, a build): save what was applied.
  const doc = await vscode.workspace.openTextDocument(uri);
  if (doc.getText() !== params.content) {
    throw new ResponseError(ErrorCode.InternalError, `the edit of ${path} did not apply (the document changed meanwhile)`);
  }
  if (doc.isDirty && !(await doc.save())) throw new ResponseError(ErrorCode.InternalError, `the editor could not save ${path}`);
  return {};
}
