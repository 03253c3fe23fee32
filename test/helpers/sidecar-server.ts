// Starts the real sidecar (`serve()`: the hub, the store, the fixture agent as
// a child process) on port 0 with the two test tokens, cleartext or with its
// own self-signed certificate, and the same shape as `startTransportServer`.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { SELF_SIGNED_CERT_FILE } from "../../sidecar/http/tls.ts";
import { type RunningServer, type ServeOptions, serve } from "../../sidecar/server/serve.ts";
import type { StartedServer } from "./transport-server.ts";
import { OTHER_TOKEN, startTransportServer, TOKEN } from "./transport-server.ts";

export const FIXTURE_AGENT = fileURLToPath(new URL("../fixtures/agent.ts", import.meta.url));

/** The real sidecar as `serve()` returns it (drain, hub, devices), in a data folder of its own. */
export interface ServedFixture {
  server: RunningServer;
  dataDir: string;
  /** The self-signed certificate, with `tls`. */
  ca: string | undefined;
  /** Closes the server and removes its data folder. */
  close(): Promise<void>;
}

/**
 * `serve()` with the fixture agent (named "fixture") on loopback port 0, the
 * tokens and data folder given, authentication on, no other origin allowed and
 * no log; `options` sets the rest (a store, notifications, a web folder…).
 */
export function serveFixtureAgent(options: Pick<ServeOptions, "tokens" | "dataDir"> & Partial<ServeOptions>): Promise<RunningServer> {
  return serve({
    host: "127.0.0.1",
    port: 0,
    agents: [{ name: "fixture", command: process.execPath, args: [FIXTURE_AGENT] }],
    auth: true,
    allowedOrigins: [],
    log: () => {},
    ...options,
  });
}

/** `serve()` with the fixture agent on port 0, cleartext or with its own self-signed certificate, and the public URLs given. */
export async function serveFixture(options: { tokens: ServeOptions["tokens"]; tls?: boolean; publicUrls?: string[] }): Promise<ServedFixture> {
  const dataDir = mkdtempSync(join(tmpdir(), "acp-remote-sidecar-"));
  let server: RunningServer;
  try {
    server = await serveFixtureAgent({
      tokens: options.tokens,
      dataDir,
      ...(options.tls === true ? { tls: "self-signed" as const } : {}),
      ...(options.publicUrls === undefined ? {} : { publicUrls: options.publicUrls }),
    });
  } catch (error) {
    // A start that fails leaves no data folder behind.
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    server,
    dataDir,
    ca: options.tls === true ? readFileSync(join(dataDir, SELF_SIGNED_CERT_FILE), "utf8") : undefined,
    close: async () => {
      try {
        await server.close();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

export async function startSidecar(options: { tls?: boolean } = {}): Promise<StartedServer> {
  const served = await serveFixture({ tokens: [TOKEN, { token: OTHER_TOKEN, label: "other" }], ...(options.tls === undefined ? {} : { tls: options.tls }) });
  return {
    url: served.server.url,
    acpUrl: `${served.server.url}/acp`,
    port: served.server.port,
    hub: served.server.hub,
    ca: served.ca,
    close: served.close,
  };
}

/** What runs behind the HTTP front in a transport test. */
export interface Backend {
  name: string;
  start(options: { tls: boolean }): Promise<StartedServer>;
  /** Quick to start: the tables run it with every client, the sidecar with one client per HTTP version. */
  everyClient: boolean;
}

export const BACKENDS: readonly Backend[] = [
  { name: "test hub", start: (options) => startTransportServer(options), everyClient: true },
  { name: "sidecar with the fixture agent", start: (options) => startSidecar(options), everyClient: false },
];
