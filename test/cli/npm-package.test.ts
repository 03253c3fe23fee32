// The npm package as a user gets it: `npm pack`, then `npm install -g` of the
// tarball into an empty prefix with an empty npm cache, then the installed
// `acp-remote` (not this checkout's): --version, `serve` answering /healthz
// and serving the web client at `/`, `connect --help`. The tarball's size and
// file count are printed and held under the bounds below.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { ManagedProcess, removeOnExit } from "../helpers/managed-process.ts";
import { installEnv, node24BinDir } from "../vscode/setup.ts";
import { packageVersion } from "../../scripts/version-define.mjs";

const REPO = resolve(import.meta.dirname, "../..");

/** The tarball, compressed, in bytes: the CLI bundle carries every dependency, and nothing else is big. */
const MAX_TARBALL_BYTES = 4 * 1024 * 1024;
/** Its files, unpacked, in bytes. */
const MAX_UNPACKED_BYTES = 16 * 1024 * 1024;
/** Its files: the command, its bundle, the web client, README, CHANGELOG, LICENSE, the docs. */
const MAX_FILES = 40;
/** One npm command (pack, install), in milliseconds. */
const NPM_TIMEOUT_MS = 5 * 60_000;

/** What may be in the package: what runs, and what a user reads. */
const ALLOWED = [/^package\.json$/, /^README\.md$/, /^CHANGELOG\.md$/, /^LICENSE$/, /^dist\/cli\.mjs$/, /^dist\/acp-remote\.mjs$/, /^dist\/web\/client\/[^/]+$/, /^docs\/[^/]+\.md$/];
/** What must be: without one of them the installed command does not run, or has no page. */
const REQUIRED = ["package.json", "README.md", "CHANGELOG.md", "LICENSE", "dist/cli.mjs", "dist/acp-remote.mjs", "dist/web/client/index.html"];

interface Packed {
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: Array<{ path: string }>;
}

const work = mkdtempSync(join(tmpdir(), "acp-remote-npm-"));
const forget = removeOnExit(work);
const prefix = join(work, "prefix");
const cache = join(work, "cache");
const dataDir = join(work, "data");
/** The installed command's environment: the project's Node 24 first on PATH (the installing Node), and no npm of ours. */
const env: NodeJS.ProcessEnv = { ...installEnv(process.env, node24BinDir()), npm_config_cache: cache, ACP_REMOTE_DEMO_DELAY_MS: "0" };
delete env["ACP_REMOTE_TOKEN"];
delete env["ACP_REMOTE_DATA_DIR"];
const installed = join(prefix, "bin", "acp-remote");
let packed: Packed;
let server: ManagedProcess | undefined;

function npm(args: string[], cwd: string): string {
  const r = spawnSync("npm", args, { cwd, env, encoding: "utf8", timeout: NPM_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(r.status, 0, `npm ${args.join(" ")}:\n${r.stdout}${r.stderr}${r.error ? String(r.error) : ""}`);
  return r.stdout;
}

function acpRemote(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(installed, args, { cwd: work, env, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

before(() => {
  if (!existsSync(join(REPO, "dist/acp-remote.mjs")) || !existsSync(join(REPO, "dist/web/client/index.html"))) {
    execFileSync(join(REPO, "node_modules/.bin/node"), ["scripts/build.mjs"], { cwd: REPO, stdio: "inherit" });
  }
  mkdirSync(prefix);
  mkdirSync(cache);
  // The package's prepack builds dist/ (checked below); here the build `npm test` made is packed as it is,
  // so that no other test file sees dist/ rebuilt under it.
  [packed] = JSON.parse(npm(["pack", "--json", "--ignore-scripts", "--pack-destination", work], REPO)) as [Packed];
  console.log(`npm package: ${packed.filename}, ${(packed.size / 1024).toFixed(0)} KiB packed, ${(packed.unpackedSize / 1024).toFixed(0)} KiB unpacked, ${packed.entryCount} files`);
  npm(["install", "--global", "--prefix", prefix, "--cache", cache, "--no-audit", "--no-fund", "--no-update-notifier", join(work, packed.filename)], work);
});

after(async () => {
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
  forget();
});

describe("the npm package, packed and installed into an empty prefix", () => {
  it("regression: npm pack held the tests, benchmarks, sources and docs images (504 files, 40 MB unpacked); it holds what runs and what a user reads, under the bounds", () => {
    const paths = packed.files.map((f) => f.path).sort();
    assert.deepEqual(paths.filter((p) => !ALLOWED.some((pattern) => pattern.test(p))), [], "files that neither run nor are read");
    assert.deepEqual(REQUIRED.filter((p) => !paths.includes(p)), [], "files the installed command needs");
    assert.ok(packed.entryCount <= MAX_FILES, `${packed.entryCount} files, at most ${MAX_FILES}`);
    assert.ok(packed.size <= MAX_TARBALL_BYTES, `${packed.size} bytes packed, at most ${MAX_TARBALL_BYTES}`);
    assert.ok(packed.unpackedSize <= MAX_UNPACKED_BYTES, `${packed.unpackedSize} bytes unpacked, at most ${MAX_UNPACKED_BYTES}`);
  });

  it("regression: nothing built dist/ before packing; the package's prepack runs the build", () => {
    const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { scripts?: Record<string, string> };
    assert.equal(pkg.scripts?.["prepack"], "npm run build");
  });

  it("the installed package depends on nothing: the bundle carries its dependencies", () => {
    const root = join(prefix, "lib", "node_modules", "acp-remote");
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
    assert.deepEqual(Object.keys(pkg.dependencies ?? {}), []);
    assert.deepEqual(existsSync(join(root, "node_modules")) ? readdirSync(join(root, "node_modules")) : [], []);
  });

  it("the installed `acp-remote --version` prints package.json's version", () => {
    const r = acpRemote(["--version"]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${packageVersion()}\n`);
  });

  it("`acp-remote connect --help` prints its usage", () => {
    const r = acpRemote(["connect", "--help"]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^Usage: acp-remote connect/);
  });

  it("the installed `serve` answers /healthz, serves the web client at `/`, and says its version", async () => {
    server = new ManagedProcess({ name: "installed acp-remote serve", command: installed, args: ["serve", "--port", "0", "--data-dir", dataDir, "--token", "npm-package-token"], env, cwd: work });
    await server.start(/acp-remote listening on (\S+)\n/);
    const url = (await server.waitForOutput(/acp-remote listening on (\S+)\n/))[1] as string;
    await server.waitForOutput(new RegExp(`acp-remote ${packageVersion().replaceAll(".", "\\.")} on Node \\d+`));
    const health = await fetch(`${url}/healthz`);
    assert.equal(health.status, 200, await health.text());
    const page = await fetch(`${url}/`);
    const html = await page.text();
    assert.equal(page.status, 200, html);
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/);
    const script = /src="\.?\/?(app-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    assert.ok(script, `the page names its script:\n${html}`);
    const bundle = await fetch(`${url}/${script}`);
    await bundle.arrayBuffer();
    assert.equal(bundle.status, 200);
  });
});
