// A /v1 route on a real HTTP server on port 0, with a real hub running the
// fixture agent (test/fixtures/agent.ts) as the model "fixture". Tests that
// need an injected clock or small limits build the route here; the end-to-end
// tests run the whole sidecar (serve(), or the CLI).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createServer, type Server } from "node:http";
import { createServer as createH2cServer, type Http2Server } from "node:http2";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { Authenticator } from "../../sidecar/http/auth.ts";
import { STORE_FILE } from "../../sidecar/store/store.ts";
import { openSqliteStore } from "../../sidecar/store/sqlite/index.ts";
import type { SharedStore } from "../../sidecar/store/shared-store.ts";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import type { OneShotRunner } from "../../sidecar/hub/types.ts";
import { createV1Route, type V1Route, type V1RouteOptions } from "../../sidecar/v1/route.ts";
import type { JobState } from "../../sidecar/v1/jobs.ts";

export const NODE = join(process.cwd(), "node_modules/.bin/node");
export const FIXTURE_AGENT = join(process.cwd(), "test/fixtures/agent.ts");
export const TOKEN = "v1-test-token-aaaaaaaaaaaaaaaa";
export const OTHER_TOKEN = "v1-test-token-bbbbbbbbbbbbbbbb";

export function fixtureAgent(name = "fixture"): AgentSpec {
  return { name, command: NODE, args: [FIXTURE_AGENT] };
}

/** A clock tests move by hand. */
export class ManualClock {
  now = Date.UTC(2026, 0, 1, 12, 0, 0);
  readonly read = (): number => this.now;
  advance(ms: number): void {
    this.now += ms;
  }
}

export interface V1Harness {
  baseURL: string;
  url: string;
  route: V1Route;
  runner: OneShotRunner;
  store: SharedStore;
  dataDir: string;
  /** Resolves when job `id` reaches `state`. */
  jobReached(id: string, state: JobState | "deleted"): Promise<void>;
  client(token?: string): OpenAI;
  close(): Promise<void>;
}

/** A runner with no agent configured: the sidecar serves only the upstream provider's models. */
export const NO_AGENTS: OneShotRunner = {
  agentNames: () => [],
  runPrompt: (agent) => Promise.reject(new Error(`no agent "${agent}"`)),
};

export interface StartOptions extends Partial<Omit<V1RouteOptions, "auth" | "runner" | "store">> {
  /** Agents of a real hub (default: the fixture agent). */
  agents?: AgentSpec[];
  /** Instead of a hub. */
  runner?: OneShotRunner;
  /** Serve cleartext HTTP/2 (prior knowledge) instead of HTTP/1.1. */
  http2?: boolean;
  dataDir?: string;
}

export async function startV1(options: StartOptions = {}): Promise<V1Harness> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "acp-remote-v1-"));
  const ownDir = options.dataDir === undefined;
  const store = openSqliteStore(join(dataDir, STORE_FILE));
  // The hub is loaded only when a test runs agents; the labelled person works in a folder of their own, as under serve().
  const hub = options.runner
    ? undefined
    : await (await import("../../sidecar/hub/hub.ts")).createHub({
        agents: options.agents ?? [fixtureAgent()],
        store,
        folders: new (await import("../../sidecar/hub/person-folders.ts")).PersonFolders({ homes: join(dataDir, "people") }),
        log: () => {},
      });
  const runner: OneShotRunner = options.runner ?? hub!;
  const auth = new Authenticator([TOKEN, { token: OTHER_TOKEN, label: "other" }]);
  const reached = new Map<string, JobState | "deleted">();
  const waiters = new Set<() => void>();
  const { agents: _agents, dataDir: _dataDir, runner: _runner, http2: _http2, ...routeOptions } = options;
  let route: V1Route;
  try {
    route = createV1Route({
      ...routeOptions,
      auth,
      runner,
      store,
      onJobChange(id, state, owner) {
        reached.set(id, state);
        options.onJobChange?.(id, state, owner);
        for (const w of [...waiters]) w();
      },
    });
  } catch (error) {
    await hub?.shutdown();
    await store.close();
    if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const server: Server | Http2Server = options.http2
    ? createH2cServer((req, res) => route.handle(req, res))
    : createServer((req, res) => route.handle(req, res));
  const sessions = new Set<{ destroy(): void }>();
  if (options.http2) (server as Http2Server).on("session", (s) => sessions.add(s).size);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    baseURL: `${url}/v1`,
    route,
    runner,
    store,
    dataDir,
    jobReached(id, state) {
      return new Promise((resolve) => {
        const check = (): void => {
          if (reached.get(id) === state) {
            waiters.delete(check);
            resolve();
          }
        };
        waiters.add(check);
        check();
      });
    },
    client(token = TOKEN) {
      return new OpenAI({ apiKey: token, baseURL: `${url}/v1`, maxRetries: 0, timeout: 60_000 });
    },
    async close() {
      if ("closeAllConnections" in server) server.closeAllConnections();
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await route.close();
      await hub?.shutdown();
      await store.close();
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls the deferred GET with the openai client until it is not 202; returns the response. */
export async function pollDeferred(client: OpenAI, id: string, intervalMs = 50): Promise<{ status: number; body: unknown }> {
  for (;;) {
    const { data, response } = await client.get(`/chat/deferred-completion/${id}`).withResponse();
    if (response.status !== 202) return { status: response.status, body: data };
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Polls the deferred GET of a job that is to fail: every answer before the
 * failure must be 202; returns what the openai client threw for the failure.
 */
export async function pollDeferredFailure(client: OpenAI, id: string, intervalMs = 50): Promise<unknown> {
  for (;;) {
    try {
      const { response } = await client.get(`/chat/deferred-completion/${id}`).withResponse();
      assert.equal(response.status, 202);
    } catch (error) {
      if (error instanceof assert.AssertionError) throw error;
      return error;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export interface CurlResult {
  status: number;
  /** `%{http_version}`: "2" for HTTP/2. */
  version: string;
  body: string;
}

/** curl --http2-prior-knowledge (cleartext HTTP/2), a client we did not write. */
export async function curlH2c(args: string[], token: string | undefined = TOKEN): Promise<CurlResult> {
  const auth = token === undefined ? [] : ["-H", `Authorization: Bearer ${token}`];
  const { stdout } = await promisify(execFile)("curl", ["-s", "--http2-prior-knowledge", ...auth, "-w", "\n%{http_code} %{http_version}", ...args]);
  const cut = stdout.lastIndexOf("\n");
  const [status = "0", version = ""] = stdout.slice(cut + 1).split(" ");
  return { status: Number(status), version, body: stdout.slice(0, cut) };
}
