// Builds the web client served at `/` (web/client/) into one folder: the
// bundle as app-[hash].js and app-[hash].css (served immutable), index.html
// pointing at them, the manifest and the icons (served no-cache), and the
// service worker as sw.js (a fixed name: a page registers it by that name),
// which keeps this build's files as the app shell. Used by scripts/build.mjs
// (into dist/web/client) and by tests (into a temporary folder).
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { build } from "esbuild";
import { iconPng } from "./web-client-icons.mjs";

const REPO = resolve(import.meta.dirname, "..");
const SOURCE = join(REPO, "web/client");

/** Builds into `outdir` (emptied first); returns the names of the bundle's files and their sizes in bytes. */
export async function buildWebClient(outdir) {
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  const result = await build({
    absWorkingDir: REPO,
    entryPoints: { app: "web/client/main.ts" },
    entryNames: "[name]-[hash]",
    outdir,
    bundle: true,
    minify: true,
    metafile: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    logLevel: "warning",
  });
  const outputs = Object.entries(result.metafile.outputs).map(([path, info]) => ({ name: basename(path), bytes: info.bytes }));
  const js = outputs.find((o) => o.name.endsWith(".js"));
  const css = outputs.find((o) => o.name.endsWith(".css"));
  if (!js || !css) throw new Error("the web client bundle lacks its script or its style sheet");
  const html = readFileSync(join(SOURCE, "index.html"), "utf8").replace("__APP_JS__", js.name).replace("__APP_CSS__", css.name);
  writeFileSync(join(outdir, "index.html"), html);
  copyFileSync(join(SOURCE, "manifest.webmanifest"), join(outdir, "manifest.webmanifest"));
  copyFileSync(join(SOURCE, "icon.svg"), join(outdir, "icon.svg"));
  for (const size of [192, 512]) writeFileSync(join(outdir, `icon-${size}.png`), iconPng(size));
  // The shell, relative to the worker's scope: "./" is the page itself.
  const files = [js.name, css.name, "manifest.webmanifest", "icon.svg", "icon-192.png", "icon-512.png"];
  const version = createHash("sha256");
  for (const name of ["index.html", ...files]) version.update(readFileSync(join(outdir, name)));
  await build({
    absWorkingDir: REPO,
    entryPoints: ["web/client/sw.ts"],
    outfile: join(outdir, "sw.js"),
    bundle: true,
    minify: true,
    platform: "browser",
    format: "iife",
    target: "es2022",
    logLevel: "warning",
    define: {
      __SHELL__: JSON.stringify(["./", ...files]),
      __SHELL_VERSION__: JSON.stringify(version.digest("base64url").slice(0, 16)),
    },
  });
  return { js, css };
}
