// An in-process agent built with the ACP SDK's own `agent()` app, to stand
// behind the SDK's `AcpServer` in interop tests. Sessions and their history
// live in the agent (not in a connection), so a session created on one
// connection can be loaded on the next: `session/load` replays the history as
// `session/update` notifications, as ACP's loadSession requires.
//
// Prompts are scripted by their text:
//   "echo <text>"         answers <text> as one agent_message_chunk
//   "permission <title>"  asks session/request_permission, answers "<optionId>" or "cancelled"
//   "wait"                waits until the session is cancelled; stop reason "cancelled"
//   "history"             answers the prompts of this session so far, joined by " | "
import { agent, methods, PROTOCOL_VERSION, RequestError, type AgentApp, type SessionNotification } from "@agentclientprotocol/sdk";
import { randomUUID } from "node:crypto";

interface SdkSession {
  id: string;
  cwd: string;
  /** Every update sent, replayed by session/load. */
  history: SessionNotification[];
  prompts: string[];
  cancel?: () => void;
}

export interface SdkAgent {
  app: AgentApp;
  sessions: Map<string, SdkSession>;
}

export function createSdkAgent(options: { loadSession?: boolean } = {}): SdkAgent {
  const sessions = new Map<string, SdkSession>();
  const session = (id: string): SdkSession => {
    const found = sessions.get(id);
    if (found === undefined) throw RequestError.resourceNotFound(id);
    return found;
  };
  const app = agent({ name: "sdk-test-agent" })
    .onRequest(methods.agent.initialize, () => ({
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: { loadSession: options.loadSession ?? true },
      agentInfo: { name: "sdk-test-agent", version: "1.0.0" },
    }))
    .onRequest(methods.agent.session.new, ({ params }) => {
      const id = randomUUID();
      sessions.set(id, { id, cwd: params.cwd, history: [], prompts: [] });
      return { sessionId: id };
    })
    .onRequest(methods.agent.session.load, async ({ params, client }) => {
      const s = session(params.sessionId);
      for (const update of s.history) await client.notify(methods.client.session.update, update);
      return {};
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.cancel?.();
    })
    .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
      const s = session(params.sessionId);
      const text = params.prompt.map((b) => (b.type === "text" ? b.text : "")).join("");
      s.prompts.push(text);
      const say = async (update: SessionNotification["update"]) => {
        const n: SessionNotification = { sessionId: s.id, update };
        s.history.push(n);
        await client.notify(methods.client.session.update, n);
      };
      await say({ sessionUpdate: "user_message_chunk", content: { type: "text", text } });
      if (text.startsWith("echo ")) {
        await say({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: text.slice(5) } });
        return { stopReason: "end_turn" };
      }
      if (text.startsWith("permission ")) {
        const answer = await client.request(methods.client.session.requestPermission, {
          sessionId: s.id,
          toolCall: { toolCallId: randomUUID(), title: text.slice(11) },
          options: [
            { optionId: "allow", name: "Allow", kind: "allow_once" },
            { optionId: "deny", name: "Deny", kind: "reject_once" },
          ],
        });
        const outcome = answer.outcome.outcome === "selected" ? answer.outcome.optionId : "cancelled";
        await say({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: outcome } });
        return { stopReason: "end_turn" };
      }
      if (text === "wait") {
        await new Promise<void>((resolve) => {
          s.cancel = resolve;
        });
        return { stopReason: "cancelled" };
      }
      if (text === "history") {
        await say({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: s.prompts.join(" | ") } });
        return { stopReason: "end_turn" };
      }
      await say({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: `unknown prompt: ${text}` } });
      return { stopReason: "end_turn" };
    });
  return { app, sessions };
}
