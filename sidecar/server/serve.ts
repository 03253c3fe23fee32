// `acp-remote serve`: the store, the hub with its agents, authentication, and
// one port for /acp and /v1. The CLI, the control server and tests all start
// the sidecar through `serve`.
import { randomBytes } from "node:crypto";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { isLoopbackHost } from "../../common/loopback.ts";
import { Authenticator } from "../http/auth.ts";
import { resolveTls } from "../http/tls.ts";
import type { Route } from "../http/types.ts";
import { type AgentHub, createHub } from "../hub/hub.ts";
import { PersonFolders } from "../hub/person-folders.ts";
import { personPrincipal } from "../hub/types.ts";
import { PEOPLE_DIR, type ServeOptions } from "./options.ts";
import { createServer } from "./front-door.ts";
import { PublicUrlError, PublicUrls } from "../http/public-url.ts";
import { hostname } from "node:os";
import { openSharedStore } from "../store/open.ts";
import type { SharedStore } from "../store/shared-store.ts";
import { NodePresence } from "../cluster/node-presence.ts";
import { ClusterHub } from "../cluster/cluster-hub.ts";
import { NodeClaims, nodeSecretProblem } from "../cluster/node-claim.ts";
import { DEFAULT_CLUSTER_JOB_SCAN_MS } from "../cluster/limits.ts";
import { DEFAULT_STORE_RETRY_AFTER_S } from "../store/limits.ts";
import { createV1Route, type JobChange, type V1Route } from "../v1/route.ts";
import { createWebRoute } from "../web/web-route.ts";
import { startNotifications, type RunningNotifications } from "../notify/notifications.ts";
import { parseNtfyTarget } from "../notify/ntfy-sender.ts";
import { lanUrl } from "../../common/lan-address.ts";
import { upstreamKeyFromEnv, v1PermissionsFromEnv } from "./environment.ts";
import { DeviceRegistry } from "../devices/device-registry.ts";
import { PRIVATE_FILE_MODE } from "../../common/private-files.ts";
import { prepareDataFolder } from "./data-folder.ts";
import { createHealthRoute, type ReadinessCheck, readinessOf } from "./health.ts";
import { DEFAULT_DRAIN_TIMEOUT_MS } from "../http/server-limits.ts";
import type { Log } from "../../protocol/log-line.ts";
import { DEMO_DELAY_ENV, DEMO_EDITOR_FLAG } from "../agents/demo/demo-host.ts";

export { DEFAULT_HOST, DEFAULT_PORT, defaultDataDir, type ServeOptions } from "./options.ts";

const DEMO_AGENT_NAME = "demo";
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
  /** The addresses people use through a proxy or tunnel; the editor adds the one asExternalUri gives. */
  publicUrls: PublicUrls;
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
  /** Hears every change of a deferred job's state (the editor is told of its person's); returns an unsubscribe. */
  onJobChange(listener: (change: JobChange) => void): () => void;
}

/** The command that starts the embedded demo agent: this very program, `demo-agent` (with DEMO_EDITOR_FLAG under an editor). */
export function demoAgentSpec(hostedBy: ServeOptions["hostedBy"] = "terminal"): AgentSpec {
  const self = fileURLToPath(import.meta.url);
  // From source, the CLI is sidecar/cli/main.ts; in the bundle, this module is the CLI itself.
  const cli = self.endsWith(".ts") ? join(dirname(self), "../cli/main.ts") : self;
  // An agent sees none of the server's variables; the demo's own setting is handed on by name.
  const delay = process.env[DEMO_DELAY_ENV];
  const args = [cli, "demo-agent", ...(hostedBy === "editor" ? [DEMO_EDITOR_FLAG] : [])];
  return { name: DEMO_AGENT_NAME, command: process.execPath, args, ...(delay === undefined ? {} : { env: { [DEMO_DELAY_ENV]: delay } }) };
}

export async function serve(options: ServeOptions): Promise<RunningServer> {
  // From a terminal the text alone, as people read it; an editor passes its own (protocol/log-line.ts).
  const log: Log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  if (!options.auth && !isLoopbackHost(options.host)) {
    throw new Error(`--no-auth is only allowed on a loopback host, not ${options.host}: give clients a token instead`);
  }
  prepareDataFolder(options.dataDir, log);
  let tokens = options.tokens;
  let generatedToken: string | undefined;
  if (options.auth && tokens.length === 0) {
    generatedToken = persistentToken(options.dataDir);
    tokens = [generatedToken];
  }
  // Read before anything starts: a bad value stops the start with nothing to clean up.
  let publicUrls: PublicUrls;
  try {
    publicUrls = new PublicUrls(options.publicUrls ?? []);
  } catch (error) {
    throw asFlagError(error);
  }
  const permissions = v1PermissionsFromEnv();
  const ntfy = options.notify?.ntfy === undefined ? undefined : parseNtfyTarget(options.notify.ntfy);
  const folders = personFolders(options);
  const upstream = options.upstream ? { url: options.upstream.url, apiKey: options.upstream.apiKey ?? upstreamKeyFromEnv() } : undefined;
  const shared = options.store !== undefined;
  // On a shared store the nodes vouch for each other's clients with a secret of
  // their configuration, never one kept in the store (whoever reads the store
  // could then act for anyone): no secret, no start.
  const secretProblem = shared ? nodeSecretProblem(options.nodeSecret) : undefined;
  if (secretProblem !== undefined) {
    throw new Error(`--store: ${secretProblem}; set ACP_REMOTE_NODE_SECRET (or --node-secret-file FILE) to the same secret on every node, e.g. $(openssl rand -base64 32)`);
  }
  const nodeSecret = options.nodeSecret ?? "";
  const nodeId = options.nodeId ?? (shared ? `${hostname()}-${options.port || process.pid}` : "local");
  const store = await openSharedStore({
    ...(options.store === undefined ? {} : { url: options.store }),
    ...(options.storeCa === undefined ? {} : { ca: options.storeCa }),
    dataDir: options.dataDir,
    nodeId,
    log,
  });
  const agents = options.agents.length > 0 ? options.agents : [demoAgentSpec(options.hostedBy)];
  // On a shared store the node announces itself before it takes any session, so
  // the others never see one of its sessions without a live home.
  let presence: NodePresence | undefined;
  let hub: Awaited<ReturnType<typeof createHub>>;
  let devices: DeviceRegistry;
  try {
    if (shared) presence = await NodePresence.start(store, { id: nodeId, url: options.advertiseUrl ?? "", startedAt: Date.now() }, { log });
    // Who answered a permission request is told by the device's name (the devices open just below, before any request).
    const deviceLabel = (deviceId: string): string | undefined => devices.list().find((d) => d.deviceId === deviceId)?.label;
    hub = await createHub({ agents, store, folders, log, deviceLabel, ...(presence ? { liveNodes: () => (presence as NodePresence).liveNodes() } : {}) });
    devices = await DeviceRegistry.open(store.devices, { nodes: store.nodes, onAvailability: (listener) => store.onAvailability(listener) });
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
  // Known once the server listens: where a phone reaches it, for ntfy's links.
  let ownUrl = "";
  let notifications: RunningNotifications;
  try {
    notifications = await startNotifications({
      hub: hub.notices,
      store,
      devices,
      // Push services may write to the operator through the VAPID subject: the public https address, when there is one.
      subject: publicUrls.first()?.url.startsWith("https:") ? publicUrls.first()!.url : "mailto:acp-remote@localhost",
      publicBase: () => publicUrls.first()?.url ?? ownUrl,
      ...(ntfy === undefined ? {} : { ntfy: { target: ntfy, ...(options.notify?.ntfyToken === undefined ? {} : { token: options.notify.ntfyToken }) } }),
      ...(presence === undefined ? {} : { nodeUrl: (id: string) => (presence as NodePresence).nodeUrl(id) }),
      ...(options.nodeCa === undefined ? {} : { nodeCa: options.nodeCa }),
      ...(options.notify?.pushAgent === undefined ? {} : { pushAgent: options.notify.pushAgent }),
      log,
    });
  } catch (error) {
    await Promise.all(routes.map((r) => r.close()));
    await hub.shutdown();
    devices.close();
    await presence?.stop();
    await store.close();
    throw error;
  }
  routes.push({ ...notifications.route, close: async () => notifications.close() });
  if (options.web !== false) {
    const web = createWebRoute({
      auth,
      agentNames: () => hub.agentNames(),
      // The server's own person starts where the hub does (the server's working directory); another person in their first folder.
      defaultCwd: async (principal) => (await folders.defaultCwd(principal.id)) ?? process.cwd(),
      secure: options.tls !== undefined,
      publicUrls,
      ...(options.webDir === undefined ? {} : { dir: options.webDir }),
    });
    routes.push({ ...web, close: async () => undefined });
  }
  let server: Awaited<ReturnType<typeof createServer>>;
  try {
    const tls = await resolveTls(options.tls, options.dataDir, options.host);
    if (shared) auth.setNodeClaims(new NodeClaims({ secret: nodeSecret, nodeId }));
    server = await createServer({
      host: options.host,
      port: options.port,
      auth,
      // On a shared store a session whose home is another live node is reached through that node.
      hub: presence ? new ClusterHub(hub, { store, presence, nodeSecret, ...(options.nodeCa === undefined ? {} : { nodeCa: options.nodeCa }), log }) : hub,
      routes,
      allowedOrigins: options.allowedOrigins,
      publicUrls,
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
    // A public URL whose prefix is a path of the server's own is refused as the listener is made.
    throw asFlagError(error);
  }
  const listening = server;
  ownUrl = lanUrl(server.url, options.host);
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
    publicUrls,
    onJobChange: (listener) => v1.onJobChange(listener),
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
        if (presence) await hub.handOver().catch((error: unknown) => log(`acp-remote: sessions not handed over: ${String(error)}`, "warn"));
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

/** A refused public URL is reported as the flag that gave it; any other error as it is. */
function asFlagError(error: unknown): unknown {
  return error instanceof PublicUrlError ? new Error(`--public-url ${error.message}`) : error;
}

/**
 * The folders each person may use: the folders `--root` grants them, else one
 * of their own in the data folder. A granted folder that is not one stops the
 * start, rather than leave that person with none.
 */
function personFolders(options: ServeOptions): PersonFolders {
  const granted = new Map<string, string[]>();
  for (const { person, dir } of options.roots ?? []) {
    let folder = false;
    try {
      folder = isAbsolute(dir) && statSync(dir).isDirectory();
    } catch {
      // Answered below.
    }
    if (!folder) throw new Error(`--root ${person}=${dir}: not an existing folder (an absolute path)`);
    const { id } = personPrincipal(person);
    granted.set(id, [...(granted.get(id) ?? []), dir]);
  }
  return new PersonFolders({ granted, homes: join(options.dataDir, PEOPLE_DIR) });
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
  writeFileSync(file, `${token}\n`, { mode: PRIVATE_FILE_MODE });
  return token;
}
