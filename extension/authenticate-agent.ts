// ACP Remote: Authenticate Agent… The editor signs an agent in the way a
// remote client does: it connects to its own server's /acp with its token
// (the SDK's client over Streamable HTTP), reads the sign-in methods the agent
// announces in `initialize`, and sends `authenticate` with the one picked; the
// server passes it to the agent process, which every session of that agent
// shares. A method of type `terminal` is the agent's own interactive set-up:
// it runs in a terminal, with the agent's command and the method's arguments.
import * as vscode from "vscode";
import { Agent, fetch as undiciFetch } from "undici";
import { client, methods, PROTOCOL_VERSION, type AuthMethod } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import type { AgentInfo } from "../protocol/control.ts";
import { isLoopbackHost } from "../common/loopback.ts";
import { isRecord } from "../protocol/jsonrpc.ts";
import type { Ctx } from "./ctx.ts";

interface MethodItem extends vscode.QuickPickItem {
  method: AuthMethod;
  terminal?: { args: string[]; env: Record<string, string> };
}

/** A terminal method's arguments and environment: the spec's `type: "terminal"`, or (Qwen Code) the same under `_meta`. */
function terminalOf(method: AuthMethod): MethodItem["terminal"] {
  const m = method as unknown as Record<string, unknown>;
  const meta = isRecord(m["_meta"]) ? m["_meta"] : {};
  const source = m["type"] === "terminal" ? m : meta["type"] === "terminal" ? meta : undefined;
  if (source === undefined) return undefined;
  const args = Array.isArray(source["args"]) ? source["args"].filter((a): a is string => typeof a === "string") : [];
  const env = isRecord(source["env"]) ? (Object.fromEntries(Object.entries(source["env"]).filter(([, v]) => typeof v === "string")) as Record<string, string>) : {};
  return { args, env };
}

async function pickAgent(ctx: Ctx, arg: unknown): Promise<AgentInfo | undefined> {
  await ctx.refreshStatus();
  const agents = ctx.status?.agents ?? [];
  if (typeof arg === "string") return agents.find((a) => a.name === arg);
  if (agents.length <= 1) return agents[0];
  const pick = await vscode.window.showQuickPick(
    agents.map((a) => ({ label: a.name, description: a.state, detail: a.command, agent: a })),
    { title: "ACP Remote: Authenticate Agent", placeHolder: "The agent to sign in" },
  );
  return pick?.agent;
}

/** Runs the command; resolves with the id of the method the agent accepted (undefined otherwise). */
export async function authenticateAgent(ctx: Ctx, arg?: unknown): Promise<string | undefined> {
  const agent = await pickAgent(ctx, arg);
  if (agent === undefined) return undefined;
  const url = new URL(`${ctx.server!.url}/acp`);
  url.searchParams.set("agent", agent.name);
  // The sidecar's own self-signed certificate, on a loopback address only.
  const dispatcher = url.protocol === "https:" && isLoopbackHost(url.hostname) ? new Agent({ connect: { rejectUnauthorized: false } }) : undefined;
  const fetchImpl = (dispatcher ? (input: string | URL | Request, init?: RequestInit) => undiciFetch(input as string, { ...(init as object), dispatcher }) : fetch) as typeof fetch;
  const stream = createHttpStream(url.toString(), { fetch: fetchImpl, headers: { authorization: `Bearer ${await ctx.tokens.get()}` } });
  try {
    return await client({ name: "acp-remote-editor" }).connectWith(stream, async (connection) => {
      const init = await connection.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
      const offered = init.authMethods ?? [];
      if (offered.length === 0) {
        void vscode.window.showInformationMessage(`ACP Remote: ${agent.name} announces no sign-in method.`);
        return undefined;
      }
      const pick = await vscode.window.showQuickPick<MethodItem>(
        offered.map((method) => {
          const terminal = terminalOf(method);
          return { label: method.name, description: terminal ? `${method.id} · in a terminal` : method.id, detail: method.description ?? undefined, method, ...(terminal ? { terminal } : {}) };
        }),
        // Kept open when focus moves (a notification of the server), until the person picks or escapes.
        { title: `ACP Remote: sign ${agent.name} in`, placeHolder: "How the agent signs in", ignoreFocusOut: true },
      );
      if (pick === undefined) return undefined;
      if (pick.terminal) {
        const configured = ctx.config.server().agents.find((a) => a.name === agent.name);
        if (configured === undefined) throw new Error(`${agent.name} is not in acpRemote.agents: run its sign-in in a terminal yourself`);
        // The method's arguments replace the agent's own (the registry's Terminal Auth).
        const terminal = vscode.window.createTerminal({ name: `Sign in: ${agent.name}`, shellPath: configured.command, shellArgs: pick.terminal.args, env: { ...configured.env, ...pick.terminal.env } });
        terminal.show();
        return undefined;
      }
      await connection.request(methods.agent.authenticate, { methodId: pick.method.id });
      ctx.log.info(`Authenticated agent ${agent.name} with ${pick.method.id}`);
      void vscode.window.showInformationMessage(`ACP Remote: ${agent.name} is signed in (${pick.method.name}).`);
      return pick.method.id;
    });
  } finally {
    await dispatcher?.close();
  }
}
