// A relay built the way a user of the SDK would build one: the SDK's
// `AcpServer` serving remote clients, in front of a stdio agent process that
// the SDK's client app (`client().connect(ndJsonStream(...))`) talks to. Every
// request of a remote client is forwarded to the agent with the SDK's typed
// calls; every `session/update` of the agent goes back to the remote
// connection that created the session. One agent process serves every
// connection, as ours does. It is the peer of our relay that pays for the
// same agent process.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { agent, client, methods, ndJsonStream, type AgentContext } from "@agentclientprotocol/sdk";
import type { AgentSpec } from "../protocol/agent-spec.ts";
import { createSdkHandlers, type SdkHandlers } from "./sdk-server.ts";

export function createSdkBridgeHandlers(spec: AgentSpec): SdkHandlers {
  const child = spawn(spec.command, spec.args, { stdio: ["pipe", "pipe", "ignore"], env: { ...process.env, ...spec.env } });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  /** The remote connection that created each session: where its updates go. */
  const followers = new Map<string, AgentContext>();
  const upstream = client({ name: "acp-remote-bench-sdk-bridge" })
    .onNotification(methods.client.session.update, ({ params }) => followers.get(params.sessionId)?.notify(methods.client.session.update, params))
    .connect(ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>));
  const bridge = agent({ name: "acp-remote-bench-sdk-bridge" })
    .onRequest(methods.agent.initialize, ({ params }) => upstream.agent.request(methods.agent.initialize, params))
    .onRequest(methods.agent.session.new, async ({ params, client: remote }) => {
      const created = await upstream.agent.request(methods.agent.session.new, params);
      followers.set(created.sessionId, remote);
      return created;
    })
    .onRequest(methods.agent.session.prompt, ({ params, signal }) => upstream.agent.request(methods.agent.session.prompt, params, { cancellationSignal: signal }))
    .onNotification(methods.agent.session.cancel, ({ params }) => upstream.agent.notify(methods.agent.session.cancel, params));
  return createSdkHandlers(bridge, async () => {
    upstream.close();
    child.kill("SIGTERM");
    await exited;
  });
}
