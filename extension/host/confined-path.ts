// The editor's side of the shared confinement rule (common/confine.ts): a
// host request's path, confined to the given folders, or the JSON-RPC error
// the language client answers with. Free of `vscode` so the rule the editor
// applies runs in plain Node tests too.
import { ResponseError } from "vscode-jsonrpc/node";
import { ConfinementError, confineExisting, confineNew, requireAbsolute } from "../../common/confine.ts";

/** Whether the path must exist (a read, a terminal's cwd) or may be created (a write). */
export type PathUse = "existing" | "new";

/** The real path `path` designates, when it lies inside one of `roots`; a ResponseError otherwise. */
export async function confinedPath(path: unknown, roots: readonly string[], use: PathUse, what = "path"): Promise<string> {
  try {
    const absolute = requireAbsolute(path, what);
    const folders = { roots, name: "the workspace folders" };
    return use === "existing" ? await confineExisting(absolute, folders) : await confineNew(absolute, folders);
  } catch (error) {
    if (error instanceof ConfinementError) throw new ResponseError(error.code, error.message);
    throw error;
  }
}
