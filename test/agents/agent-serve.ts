// One published agent behind a real `acp-remote serve` (in this process, on
// port 0) for real turns: its model is the scripted endpoint, its home and
// project folder are its own, its stdio goes through the ACP tap (which notes
// the methods it calls: fs/*, terminal/*, permissions), and the SDK's own
// client talks to the server over Streamable HTTP. The server can be stopped
// and started again on the same data folder (a restart).
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  client,
  methods,
  PROTOCOL_VERSION,
  type ClientContext,
  type InitializeResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { serve, type RunningServer } from "../../sidecar/server/serve.ts";
import { tapped, tappedCalls, type TappedCall } from "../helpers/acp-tap.ts";
import { ScriptedModelApi } from "../helpers/scripted-model/server.ts";
import { isolatedHome } from "../interop/published-agents.ts";
import type { RealAgent } from "./real-agents.ts";

export const TOKEN = "real-agent-token-0123456789abcdef";

/** How the SDK client answers the agent's permission requests. */
export type PermissionAnswer = "allow" | "reject";

export interface Remote {
  initialized: InitializeResponse;
  /** The SDK's context for calling the agent through the server. */
  agent: ClientContext;
  updates: SessionNotification[];
  permissions: RequestPermissionRequest[];
  /** What the next permission requests get. */
  answer: PermissionAnswer;
  /** Resolves once `predicate` holds of the updates so far; rejects after `timeoutMs`. */
  until(predicate: (updates: SessionNotification[]) => boolean, timeoutMs: number, what: string): Promise<void>;
  close(): Promise<void>;
}

export interface AgentServe {
  api: ScriptedModelApi;
  server: RunningServer;
  /** The sessions' folder. */
  cwd: string;
  logs: string[];
  /** What the agent process called, as the tap noted it. */
  calls(): TappedCall[];
  /** A new SDK client connection, initialized (and authenticated where the agent needs it). */
  connect(): Promise<Remote>;
  /** Stops the server (and its agent) and starts it again on the same data folder. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function startAgentServe(agent: RealAgent, bin: string): Promise<AgentServe> {
  const api = await ScriptedModelApi.start();
  const root = mkdtempSync(join(tmpdir(), `acp-agent-${agent.name}-`));
  const { home, env } = isolatedHome(root);
  const cwd = join(root, "project");
  mkdirSync(cwd);
  const tapFile = join(root, "tap.jsonl");
  const { command, args } = agent.command(bin);
  const logs: string[] = [];
  const spec = { name: agent.name, ...tapped(tapFile, command, args), env: { ...env, ...agent.env(api.url, home) } };
  const start = () =>
    serve({ host: "127.0.0.1", port: 0, agents: [spec], tokens: [TOKEN], auth: true, dataDir: join(root, "data"), allowedOrigins: [], log: (line) => logs.push(line) });
  const remotes = new Set<Remote>();
  let server = await start();
  const self: AgentServe = {
    api,
    get server() {
      return server;
    },
    cwd,
    logs,
    calls: () => tappedCalls(tapFile),
    connect: async () => {
      const remote = await connect(server.url, agent);
      remotes.add(remote);
      return remote;
    },
    restart: async () => {
      for (const r of remotes) await r.close();
      remotes.clear();
      await server.close();
      server = await start();
    },
    close: async () => {
      for (const r of remotes) await r.close();
      await server.close();
      await api.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
  return self;
}

/** An SDK client connection to the server at `url` (Streamable HTTP), initialized, and authenticated where `agent` needs it. */
export async function connect(url: string, agent: RealAgent): Promise<Remote> {
  const updates: SessionNotification[] = [];
  const permissions: RequestPermissionRequest[] = [];
  const waiters = new Set<() => void>();
  const remote = { answer: "allow" as PermissionAnswer } as Remote;
  const connection = client({ name: "real-agent-test" })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
      for (const w of waiters) w();
    })
    .onRequest(methods.client.session.requestPermission, ({ params }): RequestPermissionResponse => {
      permissions.push(params);
      for (const w of waiters) w();
      const kinds = remote.answer === "allow" ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
      const option = params.options.find((o) => o.kind === kinds[0]) ?? params.options.find((o) => kinds.includes(o.kind));
      return option ? { outcome: { outcome: "selected", optionId: option.optionId } } : { outcome: { outcome: "cancelled" } };
    })
    .connect(createHttpStream(`${url}/acp`, { headers: { authorization: `Bearer ${TOKEN}` } }));
  const initialized = await connection.agent.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
  });
  if (agent.authMethod !== undefined) await connection.agent.request(methods.agent.authenticate, { methodId: agent.authMethod });
  let closed = false;
  return Object.assign(remote, {
    initialized,
    agent: connection.agent,
    updates,
    permissions,
    until: (predicate: (u: SessionNotification[]) => boolean, timeoutMs: number, what: string) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!predicate(updates)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${what}: not within ${timeoutMs} ms; updates: ${JSON.stringify(updates.map((u) => u.update.sessionUpdate))}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: async () => {
      if (closed) return;
      closed = true;
      connection.close();
      await connection.closed.catch(() => undefined);
    },
  });
}
