// Agents by name from the ACP Registry: the list refreshed from the registry's
// URL into the data folder's cache (a real HTTP server on port 0 plays the
// registry), the cache and then the shipped snapshot when that fails, within
// the timeout; `serve --agent ID` resolved to the pinned command; and
// `acp-remote agents` as a child process.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { agentRegistryCacheFile, formatAgentList, loadSidecarRegistry, loadSidecarRegistryOffline } from "../../sidecar/agents/registry.ts";
import { parseServeArgs, peekServeArgs, registryAgentRef } from "../../sidecar/cli/serve-args.ts";
import { DEFAULT_REGISTRY_FETCH_TIMEOUT_MS } from "../../sidecar/limits.ts";
import { parseAgentRegistrySnapshot } from "../../common/agent-registry.ts";

const ROOT = join(import.meta.dirname, "..", "..");
const NODE = new URL("../../node_modules/.bin/node", import.meta.url).pathname;
const CLI = new URL("../../sidecar/cli/main.ts", import.meta.url).pathname;

const dirs: string[] = [];
const servers: Server[] = [];
after(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "acp-registry-"));
  dirs.push(dir);
  return dir;
}

const REGISTRY = {
  version: "1.0.0",
  agents: [
    { id: "claude-acp", name: "Claude Agent", version: "0.30.0", description: "Claude over ACP", distribution: { npx: { package: "@agentclientprotocol/claude-agent-acp@0.30.0" } } },
    { id: "newcomer", name: "Newcomer", version: "2.0.0", description: "Only in the fresh list", distribution: { uvx: { package: "newcomer-agent", args: ["acp"] } } },
  ],
  extensions: [],
};

/** A registry at a URL of this machine; `answer` decides each response (never answering is a choice). */
async function registryServer(answer: (res: ServerResponse) => void): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    answer(res);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/registry.json`, hits: () => hits };
}
const serveJson = (body: unknown) => (res: ServerResponse) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
};

describe("the agent list's sources", () => {
  test("a reachable registry is fetched and cached; within the hour the cache is used without asking again", async () => {
    const dir = dataDir();
    const registry = await registryServer(serveJson(REGISTRY));
    const env = { ACP_REMOTE_REGISTRY_URL: registry.url };
    const fresh = await loadSidecarRegistry({ dataDir: dir, env });
    assert.equal(fresh.source, "registry");
    assert.deepEqual(fresh.registry.agents.map((a) => a.id), ["claude-acp", "newcomer"]);
    assert.ok(existsSync(agentRegistryCacheFile(dir)));
    const again = await loadSidecarRegistry({ dataDir: dir, env });
    assert.equal(again.source, "cache");
    assert.equal(registry.hits(), 1);
    assert.equal(again.fetchedAt, fresh.fetchedAt);
    assert.equal(loadSidecarRegistryOffline(dir).source, "cache");
  });

  test("a registry that never answers: the cache after the timeout, and the reason is given, not thrown", async () => {
    const dir = dataDir();
    const good = await registryServer(serveJson(REGISTRY));
    await loadSidecarRegistry({ dataDir: dir, env: { ACP_REMOTE_REGISTRY_URL: good.url } });
    const silent = await registryServer(() => undefined);
    const started = Date.now();
    const loaded = await loadSidecarRegistry({ dataDir: dir, env: { ACP_REMOTE_REGISTRY_URL: silent.url }, force: true, timeoutMs: 300 });
    assert.ok(Date.now() - started < 5_000, "bounded by the timeout");
    assert.equal(loaded.source, "cache");
    assert.equal(loaded.refreshError, `${silent.url}: no answer in time`);
    assert.ok(DEFAULT_REGISTRY_FETCH_TIMEOUT_MS <= 5_000, "the default timeout keeps a start without network quick");
  });

  test("no cache and a bad answer: the shipped snapshot, with the reason", async () => {
    const dir = dataDir();
    const broken = await registryServer((res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ version: "1.0.0", agents: [{ id: "x" }] }));
    });
    const loaded = await loadSidecarRegistry({ dataDir: dir, env: { ACP_REMOTE_REGISTRY_URL: broken.url } });
    assert.equal(loaded.source, "snapshot");
    assert.match(loaded.refreshError ?? "", /lists no usable agent/);
    assert.ok(!existsSync(agentRegistryCacheFile(dir)), "a bad answer is not cached");
    const failing = await registryServer((res) => {
      res.writeHead(503);
      res.end();
    });
    assert.match((await loadSidecarRegistry({ dataDir: dir, env: { ACP_REMOTE_REGISTRY_URL: failing.url } })).refreshError ?? "", /answered HTTP 503/);
  });

  test("an empty URL turns refreshing off", async () => {
    const loaded = await loadSidecarRegistry({ dataDir: dataDir(), env: { ACP_REMOTE_REGISTRY_URL: "" } });
    assert.equal(loaded.source, "snapshot");
    assert.equal(loaded.refreshError, undefined);
  });

  test("the list names its source and age, and the command each agent runs", () => {
    const text = formatAgentList(loadSidecarRegistryOffline(dataDir()), Date.parse("2026-03-09T18:22:39Z"));
    assert.match(text, /^Agents of the ACP Registry, from the snapshot of the ACP Registry shipped with acp-remote \(2026-02-07, 30 days old\):/);
    assert.match(text, /claude-acp {2}Claude Agent 0\.101\.0\n.*\n {4}runs: npx -y @agentclientprotocol\/claude-agent-acp@0\.101\.0\n/);
    assert.match(text, /opencode {2}OpenCode .*\n.*\n {4}runs: binary archive/);
  });
});

describe("serve --agent from the registry", () => {
  test("--agent ID and --agent NAME=registry:ID are registry agents; NAME=COMMAND is not", () => {
    assert.deepEqual(registryAgentRef("claude"), { name: "claude", query: "claude" });
    assert.deepEqual(registryAgentRef("mine=registry:gemini"), { name: "mine", query: "gemini" });
    assert.equal(registryAgentRef("mine=gemini --acp"), undefined);
    assert.deepEqual(peekServeArgs(["--port", "0", "--agent", "x=cmd", "--data-dir", "/d"]), { registryAgents: false, dataDir: "/d" });
    assert.equal(peekServeArgs(["--agent", "claude"]).registryAgents, true);
  });

  test("--agent claude runs the version the snapshot pins, with npx -y; a name picks its own", () => {
    const options = parseServeArgs(["--agent", "claude", "--agent", "g=registry:gemini", "--agent", "local=./agent --flag", "--data-dir", dataDir()], {});
    assert.notEqual(options, "help");
    if (options === "help") return;
    assert.deepEqual(options.agents, [
      { name: "claude", command: "npx", args: ["-y", "@agentclientprotocol/claude-agent-acp@0.101.0"] },
      { name: "g", command: "npx", args: ["-y", "@google/gemini-cli@0.27.3", "--experimental-acp"] },
      { name: "local", command: "./agent", args: ["--flag"] },
    ]);
    assert.deepEqual(options.registryAgents?.agents, [
      { name: "claude", id: "claude-acp", version: "0.101.0" },
      { name: "g", id: "gemini", version: "0.27.3" },
    ]);
    assert.equal(options.registryAgents?.loaded.source, "snapshot");
  });

  test("regression: offline, --agent claude ran @zed-industries/claude-code-acp@0.16.0, older than the package the README names; the shipped snapshot names @agentclientprotocol/claude-agent-acp", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    assert.match(readme, /@agentclientprotocol\/claude-agent-acp/, "the README names the package");
    const options = parseServeArgs(["--agent", "claude", "--data-dir", dataDir()], {});
    assert.notEqual(options, "help");
    if (options === "help") return;
    assert.equal(options.registryAgents?.loaded.source, "snapshot", "no registry and no cache: the shipped snapshot");
    assert.match(options.agents[0]?.args.join(" ") ?? "", /^-y @agentclientprotocol\/claude-agent-acp@\d+\.\d+\.\d+$/);
  });

  test("npm run registry:refresh writes what the registry lists as the shipped snapshot's file", async () => {
    const served = await registryServer(serveJson(REGISTRY));
    const out = join(dataDir(), "snapshot.json");
    // Not spawnSync: the registry answers from this very process.
    const child = spawn(process.execPath, [join(ROOT, "scripts", "refresh-agent-registry.mjs"), "--url", served.url, "--out", out], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise((resolve) => child.once("exit", resolve));
    assert.equal(code, 0, stderr);
    const written = parseAgentRegistrySnapshot(JSON.parse(readFileSync(out, "utf8")));
    assert.equal(written.url, served.url);
    assert.deepEqual(written.registry.agents.map((a) => a.id), REGISTRY.agents.map((a) => a.id));
    assert.ok(Date.now() - Date.parse(written.fetchedAt) < 60_000, "dated now");
  });

  test("a refreshed list is used when given; an unknown agent or a binary one is a flag error", async () => {
    const dir = dataDir();
    const registry = await registryServer(serveJson(REGISTRY));
    const loaded = await loadSidecarRegistry({ dataDir: dir, env: { ACP_REMOTE_REGISTRY_URL: registry.url } });
    const options = parseServeArgs(["--agent", "claude", "--agent", "newcomer", "--data-dir", dir], {}, loaded);
    assert.ok(options !== "help");
    assert.deepEqual(options.agents.map((a) => [a.command, ...a.args].join(" ")), ["npx -y @agentclientprotocol/claude-agent-acp@0.30.0", "uvx newcomer-agent==2.0.0 acp"]);
    assert.throws(() => parseServeArgs(["--agent", "nobody", "--data-dir", dataDir()], {}), /^Error: --agent nobody: "nobody" is not an agent of the ACP Registry/);
    assert.throws(() => parseServeArgs(["--agent", "kimi", "--data-dir", dataDir()], {}), /--agent kimi: Kimi CLI \(kimi\) 1\.9\.0 is published as an archive to download/);
  });
});

describe("acp-remote agents", () => {
  function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(NODE, [CLI, "agents", ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    return new Promise((resolve) => child.once("close", (code) => resolve({ code, stdout, stderr })));
  }

  test("--json from a reachable registry; then --offline reads the cache it left", async () => {
    const dir = dataDir();
    const registry = await registryServer(serveJson(REGISTRY));
    const fresh = await run(["--json", "--data-dir", dir], { ACP_REMOTE_REGISTRY_URL: registry.url });
    assert.equal(fresh.code, 0, fresh.stderr);
    const listed = JSON.parse(fresh.stdout) as { source: string; agents: Array<{ id: string; command?: string[] }> };
    assert.equal(listed.source, "registry");
    assert.deepEqual(listed.agents[0]?.command, ["npx", "-y", "@agentclientprotocol/claude-agent-acp@0.30.0"]);
    const offline = await run(["--offline", "--data-dir", dir], {});
    assert.equal(offline.code, 0);
    assert.match(offline.stdout, /from the cached ACP Registry list \(\d{4}-\d\d-\d\d, today\)/);
    assert.match(readFileSync(agentRegistryCacheFile(dir), "utf8"), /"format": "acp-remote\/agent-registry-snapshot"/);
  });

  test("without a network: the snapshot and its age, exit 0; a bad flag exits 2", async () => {
    const silent = await registryServer(() => undefined);
    const started = Date.now();
    const listed = await run(["--data-dir", dataDir()], { ACP_REMOTE_REGISTRY_URL: silent.url });
    assert.equal(listed.code, 0);
    assert.ok(Date.now() - started < DEFAULT_REGISTRY_FETCH_TIMEOUT_MS + 10_000);
    assert.match(listed.stdout, /shipped with acp-remote \(2026-02-07, \d+ days old\)/);
    assert.match(listed.stdout, /\(the registry could not be reached: .*no answer in time\)/);
    assert.equal((await run(["--bogus"], {})).code, 2);
  });
});
