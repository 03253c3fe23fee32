// Starts the real HTTP front (`createServer`) on port 0 over a TransportHub,
// cleartext or TLS, with bearer tokens. TLS uses the sidecar's own
// self-signed certificate, made once per test process in a temporary folder.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Authenticator } from "../../sidecar/http/auth.ts";
import type { TlsMaterial } from "../../sidecar/http/tls.ts";
import { selfSignedCertificate } from "../../sidecar/http/tls.ts";
import type { Route } from "../../sidecar/http/types.ts";
import type { ConnectionHub } from "../../sidecar/hub/types.ts";
import { createServer } from "../../sidecar/server/front-door.ts";
import type { ServerLimits } from "../../sidecar/http/server-limits.ts";
import { TransportHub } from "./transport-hub.ts";

export const TOKEN = "test-token-alpha";
export const OTHER_TOKEN = "test-token-bravo";

let material: Promise<TlsMaterial> | undefined;

/** The test process's self-signed certificate (its cert doubles as the CA clients trust). */
export function testTls(): Promise<TlsMaterial> {
  if (material === undefined) {
    const dir = mkdtempSync(join(tmpdir(), "acp-remote-tls-"));
    // The material is read into memory: the folder goes at once, even when making it fails.
    material = selfSignedCertificate(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
  }
  return material;
}

export interface StartedServer {
  url: string;
  acpUrl: string;
  port: number;
  hub: ConnectionHub;
  /** The CA to trust for TLS servers. */
  ca: string | undefined;
  close(): Promise<void>;
}

export async function startTransportServer(options: {
  tls?: boolean;
  host?: string;
  hub?: ConnectionHub;
  limits?: Partial<ServerLimits>;
  allowedOrigins?: string[];
  routes?: Route[];
  log?: (line: string) => void;
} = {}): Promise<StartedServer & { hub: ConnectionHub }> {
  const tls = options.tls === true ? await testTls() : undefined;
  const hub = options.hub ?? new TransportHub();
  const server = await createServer({
    host: options.host ?? "127.0.0.1",
    port: 0,
    auth: new Authenticator([TOKEN, { token: OTHER_TOKEN, label: "other" }]),
    hub,
    routes: options.routes ?? [],
    ...(tls !== undefined ? { tls } : {}),
    ...(options.allowedOrigins !== undefined ? { allowedOrigins: options.allowedOrigins } : {}),
    ...(options.limits !== undefined ? { limits: options.limits } : {}),
    log: options.log ?? (() => {}),
  });
  return { url: server.url, acpUrl: `${server.url}/acp`, port: server.port, hub, ca: tls?.cert, close: () => server.close() };
}
