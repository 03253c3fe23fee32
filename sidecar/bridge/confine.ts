// Confinement of host requests to a session's folders: its `cwd` and its
// `additionalDirectories`. Paths are compared after symlinks are resolved, so
// neither `..` nor a link that points out of a folder escapes it.
import { lstat, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, sep } from "node:path";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { RpcFailure } from "./rpc-failure.ts";

/** The session folders, resolved; folders that do not exist are left out. */
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

function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/** ACP requires absolute paths (the protocol's "All file paths MUST be absolute"). */
export function requireAbsolute(path: unknown, field = "path"): string {
  if (typeof path !== "string" || path.length === 0) throw RpcFailure.invalidParams(`${field} must be a non-empty string`);
  if (!isAbsolute(path)) throw RpcFailure.invalidParams(`${field} must be an absolute path, got ${JSON.stringify(path)}`);
  return path;
}

function outside(path: string): RpcFailure {
  return RpcFailure.invalidParams(`${path} is outside the session's folders (its cwd and additionalDirectories)`);
}

/**
 * The real path of an existing file or folder, when it lies within the roots.
 * A missing path answers ResourceNotFound.
 */
export async function confineExisting(path: string, roots: readonly string[]): Promise<string> {
  let real: string;
  try {
    real = await realpath(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      // Tell a missing file inside the folders from a path outside them.
      await confineNew(path, roots);
      throw new RpcFailure(ErrorCode.ResourceNotFound, `${path} does not exist`);
    }
    throw RpcFailure.internal(`${path}: ${(error as Error).message}`);
  }
  if (!(await resolveRoots(roots)).some((root) => isInside(real, root))) throw outside(path);
  return real;
}

/**
 * Where a file that may not exist yet would be written: its deepest existing
 * ancestor resolved, plus the missing names below it. A dangling symlink on
 * the way is refused (writing through it would create its target wherever it
 * points).
 */
export async function confineNew(path: string, roots: readonly string[]): Promise<string> {
  const missing: string[] = [];
  let existing = path;
  for (;;) {
    try {
      await lstat(existing);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw RpcFailure.internal(`${path}: ${(error as Error).message}`);
      const parent = dirname(existing);
      if (parent === existing) throw outside(path);
      missing.unshift(basename(existing));
      existing = parent;
    }
  }
  let real: string;
  try {
    real = await realpath(existing);
  } catch {
    throw RpcFailure.invalidParams(`${existing} is a symbolic link whose target does not exist`);
  }
  const target = missing.length === 0 ? real : join(real, ...missing);
  if (!(await resolveRoots(roots)).some((root) => isInside(target, root))) throw outside(path);
  return target;
}
