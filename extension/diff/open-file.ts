// A path a tool card names, opened in the editor at its line. ACP's paths are
// absolute; a relative one is taken from the session's working folder. Lines
// are 1-based, as ACP counts them. A file that is not there (a change not yet
// made) is said in a message rather than failing the tab.
import { isAbsolute, join } from "node:path";
import * as vscode from "vscode";

export async function openFileAt(path: string, line: number | undefined, cwd: string | undefined): Promise<void> {
  const file = isAbsolute(path) || cwd === undefined ? path : join(cwd, path);
  const uri = vscode.Uri.file(file);
  try {
    await vscode.workspace.fs.stat(uri);
  } catch {
    void vscode.window.showWarningMessage(`ACP Remote: ${file} does not exist (yet).`);
    return;
  }
  const at = line !== undefined && Number.isInteger(line) && line >= 1 ? new vscode.Position(line - 1, 0) : undefined;
  await vscode.window.showTextDocument(uri, { preview: true, ...(at === undefined ? {} : { selection: new vscode.Range(at, at) }) });
}
