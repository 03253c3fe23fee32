// The extension as a user installs it, for `node test/vscode/run.ts
// --installed`: the .vsix that `npm run package` builds (scripts/package.mjs,
// from the dist/ run.ts just built), installed into the run's extensions
// folder with `code-server --install-extension`. VS Code runs extension tests
// only beside an extension under development: that one is an empty extension
// of another id, so the acp-remote the window loads is the installed copy.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { packageVersion } from "../../scripts/version-define.mjs";

const repo = resolve(import.meta.dirname, "../..");
const NODE = join(repo, "node_modules/.bin/node");

/** The installed smoke's in-editor suite (exports `run()`). */
export const INSTALLED_SUITE_ENTRY = "test/vscode/suite/installed.ts";

/**
 * Packs the .vsix into `runDir`, installs it into `runDir/exts` (the folder
 * run.ts gives code-server), and writes the empty extension under
 * development; returns that extension's folder.
 */
export function installVsix(codeServer: string, runDir: string, env: NodeJS.ProcessEnv, log: (line: string) => void): string {
  const vsix = join(runDir, `acp-remote-${packageVersion()}.vsix`);
  const packed = spawnSync(NODE, [join(repo, "scripts/package.mjs"), "--no-build", "--out", vsix], { cwd: repo, env, encoding: "utf8" });
  if (packed.status !== 0) throw new Error(`npm run package failed:\n${packed.stdout}${packed.stderr}`);
  log(`packed ${vsix}`);
  const exts = join(runDir, "exts");
  const installed = spawnSync(
    codeServer,
    ["--config", "/dev/null", "--user-data-dir", join(runDir, "ud"), "--extensions-dir", exts, "--install-extension", vsix],
    { env, encoding: "utf8", timeout: 120_000 },
  );
  const output = `${installed.stdout ?? ""}${installed.stderr ?? ""}`;
  const folder = existsSync(exts) ? readdirSync(exts).find((name) => name.startsWith("acp-remote.acp-remote-")) : undefined;
  if (installed.status !== 0 || folder === undefined) throw new Error(`code-server --install-extension ${vsix} failed (${installed.status}):\n${output}`);
  log(`installed into ${join(exts, folder)}`);
  const host = join(runDir, "smoke-host");
  mkdirSync(host, { recursive: true });
  writeFileSync(
    join(host, "package.json"),
    JSON.stringify({ name: "acp-remote-installed-smoke", publisher: "acp-remote-tests", version: "0.0.0", engines: { vscode: "^1.100.0" } }, null, 2),
  );
  return host;
}
