// The SDK's peer of our relay: an in-process agent built with the SDK's own
// `agent()` app, answering the bench prompts exactly as the fixture agent
// does (test/fixtures/agent.ts): `flood` sends its updates without waiting for
// each, `echo` sends one, then the turn ends with end_turn.
import { randomUUID } from "node:crypto";
import { agent, methods, PROTOCOL_VERSION, type AgentApp, type SessionUpdate } from "@agentclientprotocol/sdk";
import { parsePromptScript } from "./prompt-script.ts";

export function createSdkFloodAgent(): AgentApp {
  const sessions = new Set<string>();
  return agent({ name: "acp-remote-bench-sdk-agent" })
    .onRequest(methods.agent.initialize, () => ({
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: { loadSession: false },
      agentInfo: { name: "acp-remote-bench-sdk-agent", version: "1.0.0" },
    }))
    .onRequest(methods.agent.session.new, () => {
      const sessionId = randomUUID();
      sessions.add(sessionId);
      return { sessionId };
    })
    .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
      const text = params.prompt.map((b) => (b.type === "text" ? b.text : "")).join("\n");
      const script = parsePromptScript(text);
      const say = (chunk: string): Promise<void> => {
        const update: SessionUpdate = { sessionUpdate: "agent_message_chunk", content: { type: "text", text: chunk } };
        return client.notify(methods.client.session.update, { sessionId: params.sessionId, update });
      };
      if (script.kind === "echo") {
        await say(script.text);
      } else {
        const chunk = "x".repeat(script.bytes);
        for (let i = 0; i < script.count; i++) void say(chunk);
      }
      return { stopReason: "end_turn" };
    });
}
