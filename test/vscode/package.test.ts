// `npm run package` (scripts/package.mjs) makes a .vsix that holds only what
// runs (.vscodeignore): the bundles, the phone's web client among them, the
// manifest, README, CHANGELOG, LICENSE and the icons. The list is exact, so a
// stray source map, source file or node_modules folder fails the test, and so
// does a bundle left out. The copy installed into a real VS Code is tested by
// test/vscode/installed.ts.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { inflateSync } from "node:zlib";
import { iconPng } from "../../scripts/web-client-icons.mjs";
import { packageVersion } from "../../scripts/version-define.mjs";

const repo = resolve(import.meta.dirname, "../..");
const NODE = join(repo, "node_modules/.bin/node");
const out = mkdtempSync(join(tmpdir(), "acp-vsix-"));
after(() => rmSync(out, { recursive: true, force: true }));

/** What the package holds besides the web client, and besides the two files every .vsix has. */
const EXPECTED = [
  "extension/LICENSE.txt",
  "extension/changelog.md",
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
  "extension/media/walkthrough/add-agent.md",
  "extension/media/walkthrough/approve-permission.md",
  "extension/media/walkthrough/connect-device.svg",
  "extension/media/walkthrough/new-session.md",
  "extension/media/walkthrough/start-server.svg",
];

const WEB_CLIENT = "extension/dist/web/client/";

/** A PNG's header and its inflated image data. */
function pixels(png: Buffer): Buffer {
  const parts: Buffer[] = [];
  const data: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString("ascii", at + 4, at + 8);
    const body = png.subarray(at + 8, at + 8 + length);
    if (type === "IHDR") parts.push(body);
    if (type === "IDAT") data.push(body);
    at += 12 + length;
  }
  return Buffer.concat([...parts, inflateSync(Buffer.concat(data))]);
}

function unzipList(vsix: string): string[] {
  return execFileSync("unzip", ["-Z1", vsix], { encoding: "utf8" })
    .split("\n")
    .filter((f) => f && !f.endsWith("/") && f !== "[Content_Types].xml" && f !== "extension.vsixmanifest")
    .sort();
}

function unzipText(vsix: string, entry: string): string {
  return execFileSync("unzip", ["-p", vsix, entry], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
}

describe("npm run package", () => {
  let vsix = "";
  let files: string[] = [];

  before(() => {
    if (!existsSync(join(repo, "dist/extension.cjs")) || !existsSync(join(repo, "dist/web/client/index.html"))) {
      execFileSync(NODE, ["scripts/build.mjs"], { cwd: repo, stdio: "inherit" });
    }
    vsix = join(out, `acp-remote-${packageVersion()}.vsix`);
    execFileSync(NODE, ["scripts/package.mjs", "--no-build", "--out", vsix], { cwd: repo, stdio: ["ignore", "pipe", "pipe"] });
    files = unzipList(vsix);
    console.log(`vsix: ${files.length} files, ${(statSync(vsix).size / 1024).toFixed(0)} KiB`);
  });

  it("the .vsix holds only the bundles, package.json, README, CHANGELOG, LICENSE and the icons", () => {
    assert.deepEqual(
      files.filter((f) => !f.startsWith(WEB_CLIENT)),
      [...EXPECTED].sort(),
    );
  });

  it("regression: the .vsix lacked the phone's web client (dist/web/client), so a paired phone got no page; it holds every file of the built client", () => {
    const built = readdirSync(join(repo, "dist/web/client")).map((name) => `${WEB_CLIENT}${name}`).sort();
    assert.ok(built.includes(`${WEB_CLIENT}index.html`), "the web client is built");
    assert.deepEqual(files.filter((f) => f.startsWith(WEB_CLIENT)), built);
    // The page names its hashed script and style sheet: both are in the package.
    const page = unzipText(vsix, `${WEB_CLIENT}index.html`);
    for (const [, name] of page.matchAll(/(?:src|href)="\.?\/?(app-[A-Z0-9]+\.(?:js|css))"/g)) assert.ok(files.includes(`${WEB_CLIENT}${name}`), `${name} is packed`);
  });

  it("the packed manifest has what the marketplace shows, and the sidecar runs where the workspace is", () => {
    const manifest = JSON.parse(unzipText(vsix, "extension/package.json")) as Record<string, unknown>;
    assert.equal(manifest["version"], packageVersion());
    for (const field of ["repository", "bugs", "homepage", "keywords", "galleryBanner", "icon"]) assert.ok(manifest[field], `${field} is set`);
    assert.deepEqual(manifest["extensionKind"], ["workspace"]);
    const capabilities = manifest["capabilities"] as { untrustedWorkspaces?: { supported?: unknown }; virtualWorkspaces?: unknown };
    assert.equal(capabilities.untrustedWorkspaces?.supported, "limited");
    assert.equal(capabilities.virtualWorkspaces, false);
    // The bundles carry their dependencies: a user installs none.
    assert.equal(manifest["dependencies"], undefined);
  });

  it("every file the walkthrough shows (its steps' media) is in the .vsix", () => {
    const manifest = JSON.parse(unzipText(vsix, "extension/package.json")) as {
      contributes: { walkthroughs: Array<{ steps: Array<{ media: Record<string, unknown> }> }> };
    };
    const media = manifest.contributes.walkthroughs.flatMap((w) => w.steps.flatMap((s) => ["image", "svg", "markdown"].map((k) => s.media[k]).filter((m): m is string => typeof m === "string")));
    assert.ok(media.length >= 5, "each step has its media");
    for (const file of media) assert.ok(files.includes(`extension/${file}`), `${file} is packed`);
  });

  it("the icon is the web client's, drawn at 128 × 128", () => {
    const icon = readFileSync(join(repo, "media/icon.png"));
    assert.equal(icon.readUInt32BE(16), 128, "width");
    assert.equal(icon.readUInt32BE(20), 128, "height");
    // The pixels, not the bytes: another zlib may compress the same image differently.
    assert.ok(pixels(icon).equals(pixels(iconPng(128))), "media/icon.png is scripts/web-client-icons.mjs's drawing of web/client/icon.svg at 128 pixels");
  });
});
