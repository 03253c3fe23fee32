// Installs npm packages the tests run (published ACP agents) into the test
// cache, never into the project's package.json: `$ACP_REMOTE_CACHE` (default
// `~/.cache/acp-remote`, which CI keeps between runs), with the machine's npm
// settings (registry, CA file, proxy) as test/vscode/setup.ts keeps them for
// code-server. One `npm install` for the whole set; a finished one is
// recorded by a stamp and reused. When that install fails, each package is
// tried on its own, so that only what cannot be installed here is missing.
// Several test files may ask at once: a lock file makes the others wait.
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cacheRoot, installEnv, node24BinDir } from "../vscode/setup.ts";

/** How long a second test file waits for another's install, in milliseconds. */
const LOCK_WAIT_MS = 15 * 60_000;
/** Time one npm install may take, in milliseconds. */
const INSTALL_TIMEOUT_MS = 12 * 60_000;

export interface CachedPackages {
  /** The folder whose node_modules holds them. */
  dir: string;
  /** The node_modules/.bin folder. */
  bin: string;
  /** Packages that could not be installed on this machine, with npm's last words. */
  missing: Map<string, string>;
}

function npmInstall(dir: string, specs: string[]): { ok: boolean; output: string } {
  // Install scripts run as npm's policy allows: opencode-ai's links its platform binary (from the registry).
  const r = spawnSync("npm", ["install", "--no-save", "--no-audit", "--no-fund", ...specs], {
    cwd: dir,
    env: installEnv(process.env, node24BinDir()),
    encoding: "utf8",
    timeout: INSTALL_TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { ok: r.status === 0, output: `${r.stdout ?? ""}${r.stderr ?? ""}${r.error ? String(r.error) : ""}` };
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Takes the lock file (waiting for another process's install); a lock whose process is gone is taken over. */
function lock(file: string): () => void {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(file, "wx");
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const holder = Number(readFileSync(file, "utf8").trim() || "0");
    if (holder > 0 && !pidAlive(holder)) {
      rmSync(file, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`${file} is still held by pid ${holder}`);
    // Polled: another process's install has no event to wait on.
    spawnSync("sleep", ["1"]);
  }
}

/**
 * The packages (`name` → exact version) installed under `$ACP_REMOTE_CACHE/<set>-<digest>`;
 * `log` says what takes time.
 */
export function ensureCachedPackages(set: string, packages: Record<string, string>, log: (line: string) => void = () => {}): CachedPackages {
  const specs = Object.entries(packages).map(([name, version]) => `${name}@${version}`).sort();
  const id = specs.join(" ");
  const digest = Buffer.from(id).toString("base64url").replace(/[^A-Za-z0-9]/g, "").slice(-12);
  const dir = join(cacheRoot(), `${set}-${digest}`);
  const stamp = join(dir, ".installed.json");
  mkdirSync(dir, { recursive: true });
  const release = lock(join(dir, ".lock"));
  try {
    if (existsSync(stamp)) {
      const done = JSON.parse(readFileSync(stamp, "utf8")) as { id: string; missing: Record<string, string> };
      if (done.id === id) return { dir, bin: join(dir, "node_modules/.bin"), missing: new Map(Object.entries(done.missing)) };
    }
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: `acp-remote-${set}`, private: true }) + "\n");
    log(`installing ${specs.join(", ")} into ${dir}`);
    const missing = new Map<string, string>();
    const all = npmInstall(dir, specs);
    if (!all.ok) {
      log("one npm install of them all failed; trying each on its own");
      for (const [name, version] of Object.entries(packages)) {
        const one = npmInstall(dir, [`${name}@${version}`]);
        if (!one.ok) missing.set(name, one.output.trim().split("\n").slice(-3).join(" / "));
      }
    }
    writeFileSync(stamp, JSON.stringify({ id, missing: Object.fromEntries(missing) }) + "\n");
    return { dir, bin: join(dir, "node_modules/.bin"), missing };
  } finally {
    release();
  }
}
