// One server under test in a process of its own (so that its CPU time and RSS
// are its own, and `--cpu-prof` profiles it alone), started by servers.ts with
// fork(). Argument: a ServerSpec as JSON. It reports {type: "ready", url} on
// the IPC channel, answers {type: "rss"} with its RSS after a GC, and exits
// cleanly on {type: "stop"} (so that a CPU profile gets written) or when its
// parent goes away. {type: "cpu"} is answered with the process's CPU time so
// far: the parent takes it before and after a measured window, so that the
// difference is this server's own CPU for that work (its agent process is not
// counted).
import http from "node:http";
import http2 from "node:http2";
import { constants as perfConstants, PerformanceObserver } from "node:perf_hooks";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import { testCert } from "../test/helpers/tls-cert.ts";
import { createRawHandlers } from "./raw-server.ts";
import { createSdkBridgeHandlers } from "./sdk-bridge.ts";
import { createSdkHandlers } from "./sdk-server.ts";
import type { ChildReply, ParentCommand, ServerSpec } from "./server-spec.ts";
import { benchAgentSpec, BENCH_AGENT_NAME } from "./server-spec.ts";

interface Started {
  url: string;
  close(): Promise<void>;
}

type Handlers = {
  request(req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse): void;
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): void | Promise<void>;
};

/** A plain Node server of the given flavour around request and upgrade handlers. */
async function listenWith(handlers: Handlers, listen: ServerSpec["listen"]): Promise<Started> {
  let server: http.Server | http2.Http2Server | http2.Http2SecureServer;
  if (listen === "h2c") server = http2.createServer(handlers.request);
  else if (listen === "tls") {
    const { cert, key } = await testCert();
    server = http2.createSecureServer({ cert, key, allowHTTP1: true }, handlers.request);
  } else server = http.createServer(handlers.request);
  server.on("upgrade", handlers.upgrade);
  // Capacity runs hold thousands of idle connections: no timeouts on them.
  if (server instanceof http.Server) {
    server.requestTimeout = 0;
    server.headersTimeout = 60_000;
    server.keepAliveTimeout = 60_000;
  }
  server.maxConnections = Number.MAX_SAFE_INTEGER;
  const sockets = new Set<Duplex>();
  server.on("connection", (socket: Duplex) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", 1024, resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `${listen === "tls" ? "https" : "http"}://127.0.0.1:${port}`,
    async close() {
      await handlers.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function startOurs(spec: ServerSpec, dataDir: string): Promise<Started> {
  const log = process.env["BENCH_VERBOSE"] ? (line: string) => process.stderr.write(`${line}\n`) : () => {};
  const agents = [benchAgentSpec(spec.agent, spec.agentProfile)];
  if (spec.impl === "ours-v1" || spec.liftSessionCap === true) {
    // The real listener, hub and store composed as serve() does, with the
    // admission limits the bench does not measure lifted: for /v1 the per-key
    // rate and pending jobs (one key would be capped at 60 requests a
    // minute), for capacity the per-person session cap.
    const [{ createServer }, { createHub }, { Authenticator }, { openSqliteStore }, { STORE_FILE }, { createV1Route }] = await Promise.all([
      import("../sidecar/server/front-door.ts"),
      import("../sidecar/hub/hub.ts"),
      import("../sidecar/http/auth.ts"),
      import("../sidecar/store/sqlite/index.ts"),
      import("../sidecar/store/store.ts"),
      import("../sidecar/v1/route.ts"),
    ]);
    const store = openSqliteStore(join(dataDir, STORE_FILE));
    const hub = await createHub({ agents, store, log, ...(spec.liftSessionCap === true ? { limits: { maxSessionsPerPrincipal: Number.MAX_SAFE_INTEGER } } : {}) });
    const auth = new Authenticator([], { enabled: false });
    const v1 = createV1Route({ auth, runner: hub, store, limits: { ratePerMinute: 1e9, maxPendingJobsPerKey: 1e9 } });
    const server = await createServer({ host: "127.0.0.1", port: 0, auth, hub, routes: [v1], log });
    return {
      url: server.url,
      async close() {
        await server.close();
        await v1.close();
        await hub.shutdown();
        await store.close();
      },
    };
  }
  const { serve } = await import("../sidecar/server/serve.ts");
  const running = await serve({
    host: "127.0.0.1",
    port: 0,
    agents,
    tokens: [],
    auth: false,
    dataDir,
    allowedOrigins: [],
    log,
    ...(spec.listen === "tls" ? { tls: "self-signed" as const } : {}),
  });
  return { url: running.url, close: () => running.close() };
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? "{}") as ServerSpec;
  const dataDir = mkdtempSync(join(tmpdir(), "acp-remote-bench-"));
  let started: Started;
  if (spec.impl === "raw") started = await listenWith(createRawHandlers(), spec.listen);
  else if (spec.impl === "sdk") started = await listenWith(createSdkHandlers(), spec.listen);
  else if (spec.impl === "sdk-bridge") started = await listenWith(createSdkBridgeHandlers(benchAgentSpec(spec.agent, spec.agentProfile)), spec.listen);
  else started = await startOurs(spec, dataDir);

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    await Promise.race([started.close().catch(() => {}), new Promise((r) => setTimeout(r, 5_000).unref())]);
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  };
  const reply = (message: ChildReply): void => {
    process.send?.(message);
  };
  // Major collections mark the whole heap, mostly on V8's own threads: a flood that meets one costs more.
  let majorGcs = 0;
  new PerformanceObserver((entries) => {
    for (const entry of entries.getEntries()) if ((entry as { detail?: { kind?: number } | null }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) majorGcs++;
  }).observe({ entryTypes: ["gc"] });
  process.on("message", (message: ParentCommand) => {
    if (message.type === "stop") void stop();
    else if (message.type === "rss") {
      globalThis.gc?.();
      reply({ type: "rss", rss: process.memoryUsage().rss });
    } else if (message.type === "cpu") {
      const { user, system } = process.cpuUsage();
      const main = process.threadCpuUsage?.() ?? { user: Number.NaN, system: Number.NaN };
      reply({ type: "cpu", user, system, mainThread: main.user + main.system, majorGcs });
    }
  });
  process.on("disconnect", () => void stop());
  process.on("SIGTERM", () => void stop());
  reply({ type: "ready", url: started.url, agent: BENCH_AGENT_NAME });
}

main().catch((error: unknown) => {
  process.send?.({ type: "error", message: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies ChildReply);
  process.exit(1);
});
