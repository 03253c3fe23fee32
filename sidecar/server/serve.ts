// `acp-remote serve`: the store, the hub with its agents, authentication, and
// one port for /acp and /v1. The CLI, the control server and tests all start
// the sidecar through `serve`.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { isLoopbackHost } from "../../common/loopback.ts";
import { Authenticator } from "./http/auth.ts";
import { resolveTls } from "./http/tls.ts";
import type { Route } from "./http/types.ts";
import { type AgentHub, createHub } from "../hub/hub.ts";
import type { ServeOptions } from "./options.ts";
import { createServer } from "./front-door.ts";
import { hostname } from "node:os";
import { openSharedStore } from "../store/open.ts";
import type { SharedStore } from "../store/shared-store.ts";
import { NodePresence } from "../cluster/node-presence.ts";
import { ClusterHub } from "../cluster/cluster-hub.ts";
import { DEFAULT_CLUSTER_JOB_SCAN_MS } from "../cluster/limits.ts";
import { DEFAULT_STORE_RETRY_AFTER_S } from "../store/limits.ts";
import { createV1Route, type V1Route } from "../v1/route.ts";
import { createWebRoute } from "../web/web-route.ts";
import { upstreamKeyFromEnv, v1PermissionsFromEnv } from "./environment.ts";
import { DeviceRegistry } from "../devices/device-registry.ts";
import { createHealthRoute, type ReadinessCheck, readinessOf } from "./health.ts";
import { DEFAULT_DRAIN_TIMEOUT_MS } from "./server-limits.ts";

export { DEFAULT_HOST, DEFAULT_PORT, defaultDataDir, type ServeOptions } from "./options.ts";

export const DEMO_AGENT_NAME = "demo";
/** The generated token's file in the data folder. */
export const TOKEN_FILE = "token";

export interface RunningServer {
  /** Base URL: `/acp` and `/v1` hang off it. */
  url: string;
  port: number;
  hub: AgentHub;
  auth: Authenticator;
  /** Sessions, journals, deferred jobs, devices: the embedded store or the shared one. */
  store: SharedStore;
  /** Paired devices: each with its own token for the server's person. */
  devices: DeviceRegistry;
  /** The token printed for the user when none was given (generated or kept from an earlier run). */
  generatedToken?: string;
  /**
   * Stops accepting connections and reports "draining" on /readyz, then waits
   * until no prompt turn runs, at most `timeoutMs`: true when the turns ended,
   * false when the time ran out. Open connections keep working meanwhile;
   * close() ends them.
   */
  drain(timeoutMs?: number): Promise<boolean>;
  /** Streams closed, agents ended, store flushed. */
  close(): Promise<void>;
  /** Present with an upstream provider: replaces its API key (the editor keeps it in its secret storage). */
  setUpstreamKey?(key: string | null): void;
}

/** The command that starts the embedded demo agent: this very program, `demo-agent`. */
export function demoAgentSpec(): AgentSpec {
  const self = fileURLToPath(import.meta.url);
  // From source, the CLI is sidecar/cli/main.ts; in the bundle, this module is the CLI itself.
  const cli = self.endsWith(".ts") ? join(dirname(self), "../cli/main.ts") : self;
  return { name: DEMO_AGENT_NAME, command: process.execPath, args: [cli, "demo-agent"] };
}

export async function serve(options: ServeOptions): Promise<RunningServer> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  if (!options.auth && !isLoopbackHost(options.host)) {
    throw new Error(`--no-auth is only allowed on a loopback host, not ${options.host}: give clients a token instead`);
  }
  mkdirSync(options.dataDir, { recursive: true });
  let tokens = options.tokens;
  let generatedToken: string | undefined;
  if (options.auth && tokens.length === 0) {
    generatedToken = persistentToken(options.dataDir);
    tokens = [generatedToken];
  }
  // Read before anything starts: a bad value stops the start with nothing to clean up.
  const permissions = v1PermissionsFromEnv();
  const upstream = options.upstream ? { url: options.upstream.url, apiKey: options.upstream.apiKey ?? upstreamKeyFromEnv() } : undefined;
  const shared = options.store !== undefined;
  const nodeId = options.nodeId ?? (shared ? `${hostname()}-${options.port || process.pid}` : "local");
  const store = await openSharedStore({ ...(options.store === undefined ? {} : { url: options.store }), dataDir: options.dataDir, nodeId, log });
  const agents = options.agents.length > 0 ? options.agents : [demoAgentSpec()];
  // On a shared store the node announces itself before it takes any session, so
  // the others never see one of its sessions without a live home.
  let presence: NodePresence | undefined;
  let hub: Awaited<ReturnType<typeof createHub>>;
  let devices: DeviceRegistry;
  try {
    if (shared) presence = await NodePresence.start(store, { id: nodeId, url: options.advertiseUrl ?? "", startedAt: Date.now() }, { log });
    hub = await createHub({ agents, store, log, ...(presence ? { liveNodes: () => (presence as NodePresence).liveNodes() } : {}) });
    devices = await DeviceRegistry.open(store.devices, { nodes: store.nodes });
  } catch (error) {
    await presence?.stop();
    await store.close();
    throw error;
  }
  const auth = new Authenticator(tokens, { enabled: options.auth, devices });
  let draining: Promise<boolean> | undefined;
  // What /readyz answers: the first check that names a reason makes the node unready.
  const readinessChecks: ReadinessCheck[] = [
    () => (draining === undefined ? undefined : "draining"),
    () => (store.available() ? undefined : "store unreachable"),
  ];
  const routes: Array<Route & { close(): Promise<void> }> = [createHealthRoute({ readiness: readinessOf(readinessChecks) })];
  const v1: V1Route = createV1Route({
    auth,
    runner: hub,
    store,
    ...(shared ? { rescanMs: DEFAULT_CLUSTER_JOB_SCAN_MS } : {}),
    ...(upstream ? { upstream: upstream.apiKey === undefined ? { url: upstream.url } : { url: upstream.url, apiKey: upstream.apiKey } } : {}),
    ...(permissions ? { permissions } : {}),
  });
  routes.push(v1);
  if (options.web !== false) {
    const web = createWebRoute({
      auth,
      agentNames: () => hub.agentNames(),
      // The hub's own default folder: the server's working directory.
      defaultCwd: process.cwd(),
      secure: options.tls !== undefined,
    });
    routes.push({ ...web, close: async () => undefined });
  }
  let server: Awaited<ReturnType<typeof createServer>>;
  try {
    const tls = await resolveTls(options.tls, options.dataDir);
    if (shared) auth.setNodeKey(await store.nodes.clusterKey());
    server = await createServer({
      host: options.host,
      port: options.port,
      auth,
      // On a shared store a session whose home is another live node is reached through that node.
      hub: presence ? new ClusterHub(hub, { store, presence, clusterKey: () => store.nodes.clusterKey(), log }) : hub,
      routes,
      allowedOrigins: options.allowedOrigins,
      storeDown: () =>
        store.available() ? undefined : { message: "the store cannot be reached now; try again shortly", retryAfterSeconds: DEFAULT_STORE_RETRY_AFTER_S },
      log,
      ...(tls === undefined ? {} : { tls }),
    });
  } catch (error) {
    await Promise.all(routes.map((r) => r.close()));
    await hub.shutdown();
    await presence?.stop();
    await store.close();
    throw error;
  }
  const listening = server;
  await presence?.advertise(options.advertiseUrl ?? server.url);
  const unsubscribe = devices.onRevoke((deviceId) => listening.dropDevice(deviceId));
  let closing: Promise<void> | undefined;
  const running: RunningServer = {
    url: server.url,
    port: server.port,
    hub,
    auth,
    store,
    devices,
    drain: (timeoutMs = DEFAULT_DRAIN_TIMEOUT_MS) =>
      (draining ??= (async () => {
        server.stopAccepting();
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), timeoutMs);
        });
        try {
          return await Promise.race([hub.idle().then(() => true), timedOut]);
        } finally {
          clearTimeout(timer);
        }
      })()),
    close: () =>
      (closing ??= (async () => {
        unsubscribe();
        await server.close();
        await Promise.all(routes.map((r) => r.close()));
        // On a shared store the sessions are handed over: the next node a client asks takes each at once.
        if (presence) await hub.handOver().catch((error: unknown) => log(`acp-remote: sessions not handed over: ${String(error)}`));
        await hub.shutdown();
        devices.close();
        await presence?.stop();
        await store.close();
      })()),
  };
  if (generatedToken !== undefined) running.generatedToken = generatedToken;
  if (options.upstream) running.setUpstreamKey = (key) => v1.setUpstreamKey(key);
  return running;
}

/** A token kept in the data folder, so that clients keep working across restarts. */
function persistentToken(dataDir: string): string {
  const file = join(dataDir, TOKEN_FILE);
  try {
    const token = readFileSync(file, "utf8").trim();
    if (token.length >= 16) return token;
  } catch {
    // None yet.
  }
  const token = randomBytes(32).toString("base64url");
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}
