// The web client built for a test: into a temporary folder (route tests serve
// it in-process), or into dist/web/client, where a `serve` child process
// started from source finds it, as after `npm run build`.
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
// @ts-expect-error: a build script in plain JavaScript, without type declarations.
import { buildWebClient } from "../../scripts/build-web-client.mjs";

const REPO = resolve(import.meta.dirname, "../..");

export interface BuiltClient {
  dir: string;
  js: { name: string; bytes: number };
  css: { name: string; bytes: number };
  remove(): void;
}

export async function buildToTemp(): Promise<BuiltClient> {
  const dir = mkdtempSync(join(tmpdir(), "acp-remote-web-client-"));
  const built = (await buildWebClient(dir)) as Pick<BuiltClient, "js" | "css">;
  return { dir, ...built, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Makes sure dist/web/client holds a built client, as `npm test` leaves it after its build. One that is there
 * is left alone: test files run side by side, and others pack or serve that folder (a rebuild empties it
 * first, and a .vsix packed meanwhile lacked sw.js). One that is missing is built beside it and moved into
 * place in one rename, so that no reader sees it half built.
 */
export async function buildToDist(): Promise<void> {
  const dist = join(REPO, "dist/web/client");
  if (existsSync(join(dist, "index.html"))) return;
  mkdirSync(join(REPO, "dist/web"), { recursive: true });
  const staged = mkdtempSync(join(REPO, "dist/web/.client-"));
  try {
    await buildWebClient(staged);
    renameSync(staged, dist);
  } catch (err) {
    // Another file built it first: theirs is as good.
    if (!existsSync(join(dist, "index.html"))) throw err;
  } finally {
    rmSync(staged, { recursive: true, force: true });
  }
}
