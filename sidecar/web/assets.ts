// The built web client (scripts/build-web-client.mjs) as the route serves it:
// every file of one folder, read once into memory with its content type, its
// ETag and whether its name carries a content hash. Only these names are ever
// served, so no request path reaches the file system.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, extname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface Asset {
  body: Buffer;
  type: string;
  /** A strong validator: the hash of the body, quoted. */
  etag: string;
  /** The name carries a content hash (app-[hash].js): a new build gets a new name. */
  immutable: boolean;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".webmanifest": "application/manifest+json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
};

/** esbuild's `[name]-[hash]`: eight base-32 characters. */
const HASHED = /-[A-Z0-9]{8}\.[a-z]+$/;

/** The built client beside the CLI: dist/web/client next to dist/cli.mjs, or under dist/ when running from source. */
export function defaultWebClientDir(): string {
  const self = fileURLToPath(import.meta.url);
  return self.endsWith(".ts") ? join(dirname(self), "../../dist/web/client") : join(dirname(self), "web/client");
}

/** The files of `dir` by URL path (`/app-X.js`), or undefined when the client is not built there. */
export function loadAssets(dir: string): Map<string, Asset> | undefined {
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);
  } catch {
    return undefined;
  }
  if (!names.includes("index.html")) return undefined;
  const assets = new Map<string, Asset>();
  for (const name of names) {
    const type = TYPES[extname(name)];
    if (type === undefined) continue;
    const body = readFileSync(join(dir, name));
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
    assets.set(`/${name}`, { body, type, etag, immutable: HASHED.test(name) });
  }
  return assets;
}
