// `npm run package`: builds the bundles, then the extension's package,
// acp-remote-<version>.vsix in this folder, with @vscode/vsce. What goes in
// is .vscodeignore's list: the bundles (the phone's web client among them),
// the manifest, README, CHANGELOG, LICENSE and the icons. The bundles carry
// every dependency, so vsce looks for none.
//
//   node scripts/package.mjs [--out FILE] [--no-build]
//
// --out names the file; --no-build packs dist/ as it is (the tests, after
// their own build). Prints the file's path on stdout.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { packageVersion } from "./version-define.mjs";

const REPO = resolve(import.meta.dirname, "..");
const VSCE = join(REPO, "node_modules/@vscode/vsce/vsce");

/** What the package needs from dist/; packing without one of them would ship an extension that cannot start. */
export const REQUIRED_BUNDLES = ["dist/extension.cjs", "dist/cli.mjs", "dist/acp-remote.mjs", "dist/web/client/index.html"];

function run(args) {
  const r = spawnSync(process.execPath, args, { cwd: REPO, stdio: ["ignore", "inherit", "inherit"] });
  if (r.status !== 0) throw new Error(`${args.join(" ")} failed${r.error ? `: ${r.error.message}` : ""}`);
}

/** Builds (unless `build` is false) and packs; returns the .vsix's path. */
export function packageVsix({ out = join(REPO, `acp-remote-${packageVersion()}.vsix`), build = true } = {}) {
  if (build) run([join(REPO, "scripts/build.mjs")]);
  const missing = REQUIRED_BUNDLES.filter((file) => !existsSync(join(REPO, file)));
  if (missing.length > 0) throw new Error(`not built: ${missing.join(", ")} (run npm run build)`);
  // vsce prints its own progress on stdout; ours is the file's path alone.
  const r = spawnSync(process.execPath, [VSCE, "package", "--no-dependencies", "--out", resolve(out)], { cwd: REPO, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
  if (r.status !== 0) throw new Error(`vsce package failed:\n${r.stdout ?? ""}`);
  process.stderr.write(r.stdout);
  return resolve(out);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--out");
  try {
    const file = packageVsix({ ...(at >= 0 ? { out: args[at + 1] } : {}), build: !args.includes("--no-build") });
    process.stdout.write(`${file}\n`);
  } catch (error) {
    process.stderr.write(`package: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
