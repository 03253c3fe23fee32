// A document's curl walkthrough, run as written: its shell block (between
// `<!-- NAME:begin -->` and `<!-- NAME:end -->`), and the built CLI serving the
// embedded demo agent on port 0 for it to run against — dist/cli.mjs, what
// users run, or the source in a checkout without a build.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

export const ROOT = join(import.meta.dirname, "..", "..");
const BUILT = join(ROOT, "dist", "cli.mjs");
const CLI = existsSync(BUILT) ? BUILT : join(ROOT, "sidecar", "cli", "main.ts");

/** The shell block named `name` in `doc` (a path from the repository's root). */
export function walkthrough(doc: string, name: string): string {
  const text = readFileSync(join(ROOT, doc), "utf8");
  const block = new RegExp(`<!-- ${name}:begin -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\`\\n<!-- ${name}:end -->`).exec(text);
  assert.ok(block, `${doc} has the walkthrough block`);
  return block[1]!;
}

/**
 * Runs `fn` with the URL of the demo agent served with `token` (its words not
 * delayed), and a folder of its own in os.tmpdir() (named `prefix`…) that
 * holds the server's data (in `dataIn` below it, or in the folder itself);
 * the server is stopped and the folder removed after.
 */
export async function withDemoServed<T>(options: { prefix: string; token: string; dataIn?: string }, fn: (url: string, dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), options.prefix));
  const dataDir = options.dataIn === undefined ? dir : join(dir, options.dataIn);
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0", "--data-dir", dataDir, "--token", options.token], {
    env: { ...process.env, ACP_REMOTE_DEMO_DELAY_MS: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once("line", resolve);
      child.once("exit", (code) => reject(new Error(`serve exited with ${code}`)));
    });
    return await fn(line.replace("acp-remote listening on ", ""), dir);
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once("exit", resolve)));
    rmSync(dir, { recursive: true, force: true });
  }
}
