// The embedded demo agent (`acp-remote demo-agent`): an ACP agent on stdio that
// needs no API key and no network, started by `serve` when no `--agent` is
// configured. Each prompt turn shows every kind of message acp-remote carries:
// thoughts and message text streamed word by word, a plan, a tool call that
// asks for permission and honours the answer, a file read through the client,
// tool call updates, and the stop reason (end_turn, or cancelled).
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import {
  agent,
  methods,
  PROTOCOL_VERSION,
  RequestError,
  type AgentContext,
  type ClientCapabilities,
  type ContentBlock,
  type PlanEntry,
  type PromptResponse,
  type SessionUpdate,
  type ToolCallContent,
} from "@agentclientprotocol/sdk";
import { VERSION } from "../../../protocol/version.ts";
import { AgentSessions, pause, TurnCancelled, type TurnHolder } from "./agent-sessions.ts";
import { DEMO_DELAY_ENV } from "./demo-host.ts";
import type { DemoHost } from "./demo-host.ts";
import { serveOnStdio } from "./stdio-agent.ts";

const DEMO_AGENT_INFO_NAME = "acp-remote-demo";

/** Pause between streamed words, in milliseconds; `ACP_REMOTE_DEMO_DELAY_MS` overrides it. */
const DEFAULT_DEMO_WORD_DELAY_MS = 25;

const TERMINAL_HINT =
  'To talk to a real agent, start the server with `--agent NAME=COMMAND`, for example `acp-remote serve --agent claude="npx -y @agentclientprotocol/claude-agent-acp"` or `--agent gemini="gemini --experimental-acp"`.';
const EDITOR_HINT =
  "To talk to a real agent, run **ACP Remote: Add Agent…** from the Command Palette (it picks one from the ACP Registry), or add it to the `acpRemote.agents` setting, then restart the server.";

/** How to configure a real agent, in the terms of where the server was started. */
function configureHint(host: DemoHost): string {
  return host === "editor" ? EDITOR_HINT : TERMINAL_HINT;
}

const OPTION = { allowOnce: "allow_once", allowAlways: "allow_always", reject: "reject_once" } as const;

interface DemoSession extends TurnHolder {
  cwd: string;
  /** Set when the person chose "allow always" in this session. */
  alwaysAllowed: boolean;
}

function wordDelay(): number {
  const configured = Number(process.env[DEMO_DELAY_ENV]);
  return Number.isFinite(configured) && configured >= 0 ? configured : DEFAULT_DEMO_WORD_DELAY_MS;
}

function promptText(prompt: ContentBlock[]): string {
  return prompt
    .map((block) => (block.type === "text" ? block.text : block.type === "resource_link" ? `[${block.name}]` : `[${block.type}]`))
    .join(" ")
    .trim();
}

/** One prompt turn of the demo. */
class DemoTurn {
  private readonly client: AgentContext;
  private readonly sessionId: string;
  private readonly session: DemoSession;
  private readonly capabilities: ClientCapabilities;
  private readonly signal: AbortSignal;
  private readonly hint: string;
  private readonly delay = wordDelay();
  private readonly plan: PlanEntry[] = [
    { content: "Explain what this demo shows", priority: "high", status: "pending" },
    { content: "Propose an edit and ask for permission", priority: "high", status: "pending" },
    { content: "Read README.md through the client", priority: "medium", status: "pending" },
    { content: "Sum up", priority: "low", status: "pending" },
  ];

  constructor(client: AgentContext, sessionId: string, session: DemoSession, capabilities: ClientCapabilities, signal: AbortSignal, hint: string) {
    this.client = client;
    this.hint = hint;
    this.sessionId = sessionId;
    this.session = session;
    this.capabilities = capabilities;
    this.signal = signal;
  }

  async run(prompt: ContentBlock[]): Promise<PromptResponse> {
    try {
      const said = promptText(prompt);
      await this.think(`The person wrote: "${said.length > 120 ? `${said.slice(0, 117)}...` : said}". I am the demo agent, so I will walk through what acp-remote carries: a plan, text, a tool call that needs permission, and a file read.`);
      await this.step(0, async () => {
        await this.say(`Hello! I am the demo agent of acp-remote: I run without an API key or network, and every turn shows the kinds of messages a real agent sends through acp-remote. ${this.hint}\n\n`);
      });
      await this.step(1, () => this.proposeEdit());
      await this.step(2, () => this.readReadme());
      await this.step(3, () => this.say("That is the whole tour: thoughts, a plan, streamed text, a tool call with a permission request, and a file read through the client. Send another prompt to see it again."));
      return { stopReason: "end_turn" };
    } catch (error) {
      if (error instanceof TurnCancelled || this.signal.aborted) return { stopReason: "cancelled" };
      throw error;
    }
  }

  private update(update: SessionUpdate): Promise<void> {
    if (this.signal.aborted) throw new TurnCancelled();
    return this.client.notify(methods.client.session.update, { sessionId: this.sessionId, update });
  }

  /** Streams `text` word by word as one kind of chunk. */
  private async stream(kind: "agent_message_chunk" | "agent_thought_chunk", text: string): Promise<void> {
    const words = text.match(/\S+\s*|\s+/g) ?? [];
    for (const word of words) {
      await this.update({ sessionUpdate: kind, content: { type: "text", text: word } });
      await pause(this.delay, this.signal);
    }
  }

  private say(text: string): Promise<void> {
    return this.stream("agent_message_chunk", text);
  }

  private think(text: string): Promise<void> {
    return this.stream("agent_thought_chunk", text);
  }

  /** Runs one plan entry, reporting the plan as it goes (ACP sends the whole plan each time). */
  private async step(index: number, work: () => Promise<void>): Promise<void> {
    this.plan[index]!.status = "in_progress";
    await this.update({ sessionUpdate: "plan", entries: this.plan.map((entry) => ({ ...entry })) });
    await work();
    this.plan[index]!.status = "completed";
    await this.update({ sessionUpdate: "plan", entries: this.plan.map((entry) => ({ ...entry })) });
  }

  private async proposeEdit(): Promise<void> {
    const path = join(this.session.cwd, "HELLO_FROM_ACP_REMOTE.md");
    const toolCallId = `demo-edit-${randomUUID()}`;
    const content: ToolCallContent[] = [
      { type: "diff", path, oldText: null, newText: "# Hello from acp-remote\n\nThis file was proposed by the demo agent.\n" },
    ];
    await this.update({
      sessionUpdate: "tool_call",
      toolCallId,
      title: `Create ${path}`,
      kind: "edit",
      status: "pending",
      content,
      locations: [{ path }],
    });
    let choice: string;
    if (this.session.alwaysAllowed) {
      choice = OPTION.allowAlways;
      await this.say("You chose \"allow always\" earlier in this session, so I do not ask again. ");
    } else {
      await this.say("I propose to create a file. A real agent would wait for your answer before it changes anything, and so do I. ");
      choice = await this.askPermission(toolCallId, `Create ${path}`);
    }
    if (choice === OPTION.reject) {
      await this.update({ sessionUpdate: "tool_call_update", toolCallId, status: "failed", content: [{ type: "content", content: { type: "text", text: "Rejected: nothing was changed." } }] });
      await this.say("You rejected the edit, so I leave your files alone.\n\n");
      return;
    }
    if (choice === OPTION.allowAlways) this.session.alwaysAllowed = true;
    await this.update({ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" });
    await pause(this.delay * 4, this.signal);
    await this.update({
      sessionUpdate: "tool_call_update",
      toolCallId,
      status: "completed",
      content: [...content, { type: "content", content: { type: "text", text: "Approved. (The demo agent shows the edit but does not write it.)" } }],
    });
    await this.say(`You approved the edit (${choice === OPTION.allowAlways ? "allow always" : "allow once"}). Being a demo, I only show the diff and write nothing.\n\n`);
  }

  /** Asks the client; a cancelled turn or a cancelled answer both end the turn as cancelled. */
  private async askPermission(toolCallId: string, title: string): Promise<string> {
    let answer;
    try {
      answer = await this.client.request(
        methods.client.session.requestPermission,
        {
          sessionId: this.sessionId,
          toolCall: { toolCallId, title, kind: "edit", status: "pending" },
          options: [
            { optionId: OPTION.allowOnce, name: "Allow once", kind: "allow_once" },
            { optionId: OPTION.allowAlways, name: "Allow always", kind: "allow_always" },
            { optionId: OPTION.reject, name: "Reject", kind: "reject_once" },
          ],
        },
        // On session/cancel the request is withdrawn with $/cancel_request; do
        // not wait for a client that never answers it.
        { cancellationSignal: this.signal, stopWaitingOnCancel: true },
      );
    } catch (error) {
      if (this.signal.aborted) throw new TurnCancelled();
      throw error;
    }
    if (answer.outcome.outcome === "cancelled") throw new TurnCancelled();
    return answer.outcome.optionId;
  }

  private async readReadme(): Promise<void> {
    const path = join(this.session.cwd, "README.md");
    if (!this.capabilities.fs?.readTextFile) {
      await this.say("Your client does not offer fs/read_text_file, so I skip reading files.\n\n");
      return;
    }
    const toolCallId = `demo-read-${randomUUID()}`;
    await this.update({ sessionUpdate: "tool_call", toolCallId, title: `Read ${path}`, kind: "read", status: "in_progress", locations: [{ path, line: 1 }] });
    let text: string;
    try {
      const result = await this.client.request(methods.client.fs.readTextFile, { sessionId: this.sessionId, path, line: 1, limit: 5 }, { cancellationSignal: this.signal });
      text = result.content;
    } catch (error) {
      if (this.signal.aborted) throw new TurnCancelled();
      const reason = error instanceof RequestError ? error.message : String(error);
      await this.update({ sessionUpdate: "tool_call_update", toolCallId, status: "failed", content: [{ type: "content", content: { type: "text", text: reason } }] });
      await this.say(`I looked for ${path} through the client but found none (${reason}).\n\n`);
      return;
    }
    await this.update({ sessionUpdate: "tool_call_update", toolCallId, status: "completed", content: [{ type: "content", content: { type: "text", text } }] });
    const first = text.split("\n").find((line) => line.trim().length > 0)?.trim() ?? "";
    await this.say(`I read the start of ${path} through the client${first ? `; its first line is: "${first.length > 100 ? `${first.slice(0, 97)}...` : first}"` : ", and it is empty"}.\n\n`);
  }
}

/** Runs the demo agent on this process's stdin and stdout until stdin closes; `host` says where its server was started. */
export async function runDemoAgent(host: DemoHost = "terminal"): Promise<void> {
  const hint = configureHint(host);
  const sessions = new AgentSessions<DemoSession>();
  let clientCapabilities: ClientCapabilities = {};

  const app = agent({ name: DEMO_AGENT_INFO_NAME })
    .onRequest(methods.agent.initialize, ({ params }) => {
      clientCapabilities = params.clientCapabilities ?? {};
      return {
        protocolVersion: PROTOCOL_VERSION,
        agentCapabilities: {
          // The sidecar replays a session's journal itself; the demo has no history to add.
          loadSession: true,
          promptCapabilities: { embeddedContext: true },
        },
        agentInfo: { name: DEMO_AGENT_INFO_NAME, title: "acp-remote demo agent", version: VERSION },
        authMethods: [],
      };
    })
    .onRequest(methods.agent.session.new, async ({ params, client }) => {
      const sessionId = `demo-${randomUUID()}`;
      sessions.set(sessionId, { cwd: params.cwd, alwaysAllowed: false });
      // Sent after the response is on its way, so the client knows the session id.
      setImmediate(() => {
        void client
          .notify(methods.client.session.update, {
            sessionId,
            update: { sessionUpdate: "available_commands_update", availableCommands: [{ name: "help", description: "How to configure a real agent" }] },
          })
          .catch(() => undefined);
      });
      return { sessionId };
    })
    .onRequest(methods.agent.session.load, ({ params }) => {
      sessions.set(params.sessionId, sessions.get(params.sessionId) ?? { cwd: params.cwd, alwaysAllowed: false });
      return {};
    })
    .onRequest(methods.agent.session.close, ({ params }) => {
      sessions.close(params.sessionId);
      return {};
    })
    .onRequest(methods.agent.session.prompt, ({ params, signal, client }) => {
      // A new prompt takes the place of the turn in progress.
      sessions.cancel(params.sessionId);
      return sessions.prompt(params.sessionId, signal, async (session, turnSignal): Promise<PromptResponse> => {
        if (promptText(params.prompt).startsWith("/help")) {
          await client.notify(methods.client.session.update, { sessionId: params.sessionId, update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `This is the demo agent of acp-remote. ${hint}` } } });
          return { stopReason: "end_turn" };
        }
        return await new DemoTurn(client, params.sessionId, session, clientCapabilities, turnSignal, hint).run(params.prompt);
      });
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      sessions.cancel(params.sessionId);
    });

  await serveOnStdio(app);
}
