// `vsce package` makes a .vsix that holds only what runs (.vscodeignore):
// the bundles, the manifest, README, LICENSE and the icons. The list is exact,
// so a stray source map, source file or node_modules folder fails the test.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, it } from "node:test";

const repo = resolve(import.meta.dirname, "../..");
const NODE = join(repo, "node_modules/.bin/node");
const VSCE = join(repo, "node_modules/@vscode/vsce/vsce");
const out = mkdtempSync(join(tmpdir(), "acp-vsix-"));
after(() => rmSync(out, { recursive: true, force: true }));

/** What the package holds, besides the two files every .vsix has. */
const EXPECTED = [
  "extension/LICENSE.txt",
  "extension/package.json",
  "extension/readme.md",
  "extension/dist/acp-remote.mjs",
  "extension/dist/cli.mjs",
  "extension/dist/extension.cjs",
  "extension/dist/webview/permissions.js",
  "extension/dist/webview/pairing.js",
  "extension/dist/webview/session.js",
  "extension/dist/web/session-view.css",
  "extension/dist/web/session-view.js",
  "extension/media/activity.svg",
  "extension/media/icon.png",
].sort();

it("vsce package | the .vsix holds only the bundles, package.json, README, LICENSE and the icons", { timeout: 300_000 }, () => {
  if (!existsSync(join(repo, "dist/extension.cjs")) || !existsSync(join(repo, "dist/cli.mjs"))) {
    execFileSync(NODE, ["scripts/build.mjs"], { cwd: repo, stdio: "inherit" });
  }
  const vsix = join(out, "acp-remote.vsix");
  execFileSync(NODE, [VSCE, "package", "--no-dependencies", "--allow-missing-repository", "--no-rewrite-relative-links", "--out", vsix], {
    cwd: repo,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PATH: `${join(repo, "node_modules/.bin")}:${process.env["PATH"] ?? ""}` },
  });
  const files = execFileSync("unzip", ["-Z1", vsix], { encoding: "utf8" })
    .split("\n")
    .filter((f) => f && !f.endsWith("/") && f !== "[Content_Types].xml" && f !== "extension.vsixmanifest")
    .sort();
  assert.deepEqual(files, EXPECTED);
  console.log(`vsix: ${files.length} files, ${(statSync(vsix).size / 1024).toFixed(0)} KiB`);
});
