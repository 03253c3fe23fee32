// Which Node runs the sidecar. The sidecar's store needs `node:sqlite`
// (Node 22.13+). code-server runs extensions on Node 24 and so has it; a
// desktop VS Code whose Electron Node lacks it makes us start the sidecar on
// a `node` from PATH, and say so when there is none.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";

export type SidecarRuntime =
  /** VS Code's own runtime (languageclient forks with it). */
  | { kind: "host" }
  /** Another Node, from PATH. */
  | { kind: "path"; node: string; version: string };

export class RuntimeError extends Error {
  override name = "RuntimeError";
}

/** Whether this process can load node:sqlite (Node 22.13+; older Nodes lack it or need a flag). */
export function hostHasSqlite(): boolean {
  try {
    return process.getBuiltinModule?.("node:sqlite") !== undefined;
  } catch {
    return false;
  }
}

function nodeOnPath(path: string): string[] {
  const names = process.platform === "win32" ? ["node.exe"] : ["node"];
  const found: string[] = [];
  for (const dir of path.split(delimiter)) {
    for (const name of names) {
      const candidate = join(dir, name);
      if (dir && existsSync(candidate)) found.push(candidate);
    }
  }
  return found;
}

export interface RuntimeProbe {
  hostHasSqlite: () => boolean;
  /** The PATH to search. */
  path: string;
}

/** Finds a runtime with node:sqlite, or throws a RuntimeError that says what to install. */
export function findSidecarRuntime(probe: RuntimeProbe = { hostHasSqlite, path: process.env["PATH"] ?? "" }): SidecarRuntime {
  if (probe.hostHasSqlite()) return { kind: "host" };
  const tried: string[] = [];
  for (const node of nodeOnPath(probe.path)) {
    try {
      const version = execFileSync(node, ["-e", "require('node:sqlite'); process.stdout.write(process.version)"], {
        encoding: "utf8",
        timeout: 10_000,
      });
      return { kind: "path", node, version };
    } catch {
      tried.push(node);
    }
  }
  throw new RuntimeError(
    `The sidecar needs Node 22.13 or later (for node:sqlite). This editor runs Node ${process.versions.node}, ` +
      (tried.length > 0 ? `and none of ${tried.join(", ")} has node:sqlite. ` : "and no node was found on PATH. ") +
      "Install Node 22.13+ (or 24) and put it on PATH, then start the server again.",
  );
}
