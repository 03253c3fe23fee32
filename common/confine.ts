// The one confinement rule of host requests (fs/*, terminal/*), for the
// sidecar's own host and the editor's: a path may be touched only when it lies
// inside one of the given folders (a session's cwd and additionalDirectories,
// or the editor's workspace folders). Paths are compared after symlinks are
// resolved, so neither `..` nor a link that points out of a folder escapes it;
// a name that merely begins with two dots (`..cache`) is an ordinary name.
//
// Failures are ConfinementErrors carrying a JSON-RPC code; each host maps
// them to its own error type.
import { lstat, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import { ErrorCode } from "../protocol/jsonrpc.ts";

type ConfinementCode = typeof ErrorCode.InvalidParams | typeof ErrorCode.ResourceNotFound | typeof ErrorCode.InternalError;

export class ConfinementError extends Error {
  override name = "ConfinementError";
  readonly code: ConfinementCode;

  constructor(code: ConfinementCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** The folders, resolved; folders that are not absolute or do not exist are left out. */
export async function resolveRoots(roots: readonly string[]): Promise<string[]> {
  const resolved: string[] = [];
  for (const root of roots) {
    if (!isAbsolute(root)) continue;
    try {
      resolved.push(await realpath(root));
    } catch {
      // A folder that is gone confines nothing.
    }
  }
  return resolved;
}

/** Whether `path` is `root` or below it; both resolved. */
export function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/** ACP requires absolute paths (the protocol's "All file paths MUST be absolute"). */
export function requireAbsolute(path: unknown, field = "path"): string {
  if (typeof path !== "string" || path.length === 0) throw new ConfinementError(ErrorCode.InvalidParams, `${field} must be a non-empty string`);
  if (path.includes("\0")) throw new ConfinementError(ErrorCode.InvalidParams, `${field} must not contain a NUL character`);
  if (!isAbsolute(path)) throw new ConfinementError(ErrorCode.InvalidParams, `${field} must be an absolute path, got ${JSON.stringify(path)}`);
  return path;
}

/** The folders a path must lie in, and how errors name them ("the workspace folders"). */
export interface Folders {
  roots: readonly string[];
  name: string;
}

function outside(path: string, folders: Folders): ConfinementError {
  return new ConfinementError(ErrorCode.InvalidParams, `${path} is outside ${folders.name}`);
}

function failure(path: string, error: unknown): ConfinementError {
  return new ConfinementError(ErrorCode.InternalError, `${path}: ${(error as Error).message}`);
}

/**
 * The real path of an existing file or folder, when it lies within the folders.
 * A missing path inside them is ResourceNotFound; outside them, InvalidParams.
 */
export async function confineExisting(path: string, folders: Folders): Promise<string> {
  requireAbsolute(path);
  let real: string;
  try {
    real = await realpath(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      // Tell a missing file inside the folders from a path outside them.
      await confineNew(path, folders);
      throw new ConfinementError(ErrorCode.ResourceNotFound, `${path} does not exist`);
    }
    throw failure(path, error);
  }
  if (!(await resolveRoots(folders.roots)).some((root) => isInside(real, root))) throw outside(path, folders);
  return real;
}

/**
 * Where a file that may not exist yet would be written: its deepest existing
 * ancestor resolved, plus the missing names below it. A dangling symlink on
 * the way is refused (writing through it would create its target wherever it
 * points).
 */
export async function confineNew(path: string, folders: Folders): Promise<string> {
  requireAbsolute(path);
  const missing: string[] = [];
  let existing = path;
  for (;;) {
    try {
      await lstat(existing);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw failure(path, error);
      const parent = dirname(existing);
      if (parent === existing) throw outside(path, folders);
      missing.unshift(basename(existing));
      existing = parent;
    }
  }
  let real: string;
  try {
    real = await realpath(existing);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      throw new ConfinementError(ErrorCode.InvalidParams, `${existing} is a symbolic link whose target does not exist`);
    }
    throw failure(path, error);
  }
  const target = missing.length === 0 ? real : join(real, ...missing);
  if (!(await resolveRoots(folders.roots)).some((root) => isInside(target, root))) throw outside(path, folders);
  return target;
}
