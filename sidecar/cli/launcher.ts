// dist/cli.mjs, the `acp-remote` command as installed: it checks the Node that
// runs it, then loads the CLI (dist/acp-remote.mjs). An ES module's static
// imports are all linked before any of its code runs, so a check inside the
// CLI itself would come too late: a Node without a module the bundle imports
// stops with a stack trace before it could say what to do. This file imports
// nothing, and the CLI is imported only once the check passed.

/** The oldest Node `serve` runs on (node:sqlite, undici): package.json's `engines.node`. */
export const MIN_SERVE_NODE = "22.19";

/** The commands that need it; `--version`, `--help`, `connect` and `agents` run on older ones too. */
const NEEDS_MIN_NODE: ReadonlySet<string | undefined> = new Set(["serve"]);

/**
 * Whether this Node has node:sqlite, the module whose absence stopped the
 * CLI: what is checked is what is needed, so a Node the editor found with it
 * (22.13 and later) is not turned away for its version.
 */
function hasSqlite(): boolean {
  try {
    return process.getBuiltinModule?.("node:sqlite") !== undefined;
  } catch {
    return false;
  }
}

/**
 * The one line a command that needs a newer Node prints; undefined when this
 * Node will do (or only help is asked for). `sqlite` says whether this Node
 * has node:sqlite.
 */
export function nodeTooOld(args: readonly string[], version: string, sqlite: boolean): string | undefined {
  const command = args[0];
  if (!NEEDS_MIN_NODE.has(command) || args.includes("--help") || args.includes("-h") || sqlite) return undefined;
  return (
    `acp-remote ${command} needs Node ${MIN_SERVE_NODE} or newer, and this is Node ${version}: ` +
    `in the acp-remote folder run \`npx acp-remote ${command} …\`, which uses the Node that \`npm ci\` installed there, ` +
    `or install Node ${MIN_SERVE_NODE}+`
  );
}

// Only when this file is dist/cli.mjs; its functions are also imported by the tests.
if (import.meta.url.endsWith("/cli.mjs")) {
  const tooOld = nodeTooOld(process.argv.slice(2), process.versions.node, hasSqlite());
  if (tooOld !== undefined) {
    process.stderr.write(`${tooOld}\n`);
    process.exitCode = 1;
  } else {
    await import(new URL("./acp-remote.mjs", import.meta.url).href);
  }
}
