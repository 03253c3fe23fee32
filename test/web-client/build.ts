// The web client built for a test: into a temporary folder (route tests serve
// it in-process), or into dist/web/client, where a `serve` child process
// started from source finds it, as after `npm run build`.
import { mkdtempSync, rmSync } from "node:fs";
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

export async function buildToDist(): Promise<void> {
  await buildWebClient(join(REPO, "dist/web/client"));
}
