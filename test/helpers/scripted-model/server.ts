// A scripted model endpoint on loopback for real agents: it speaks the
// streamed Anthropic Messages API, OpenAI's Responses API and Chat
// Completions, and Google's Gemini API, answers each conversation request with the turn its script
// says (script.ts), and records every request an agent made, so a test can
// see what reached the model (the tool's result, the earlier turns).
// Requests that are not the conversation (titles, summaries, token counts,
// model lists: no tools, or no trigger) get a short answer of their own.
import { EventEmitter, once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { anthropicEntries, writeAnthropic } from "./anthropic-messages.ts";
import { geminiEntries, writeGemini } from "./gemini-generate-content.ts";
import { chatEntries, writeChat } from "./openai-chat.ts";
import { responsesEntries, writeResponses } from "./openai-responses.ts";
import { pickTurn, SCRIPT_END, type ConversationEntry, type ModelTurn, type Script } from "./script.ts";
import type { TurnWriter } from "./wire.ts";

export type { ModelTurn, Script, ScriptedToolCall, ConversationEntry } from "./script.ts";
export { chunks } from "./script.ts";

export type ModelApiKind = "anthropic-messages" | "openai-responses" | "openai-chat" | "gemini";

export interface RecordedRequest {
  api: ModelApiKind;
  path: string;
  body: Record<string, unknown>;
  /** The conversation as the request carried it. */
  entries: ConversationEntry[];
  /** The script and turn it was answered with; absent for a side request. */
  answered?: { trigger: string; turn: number };
}

/** The answer to a request outside the conversation. */
const SIDE_ANSWER: ModelTurn = { text: ["OK"] };

/** Each API by its path; whether the answer is streamed is the body's `stream`, or Gemini's method. */
const API_OF: Array<{ path: RegExp; api: ModelApiKind; streamed(path: string, body: Record<string, unknown>): boolean }> = [
  { path: /\/messages$/, api: "anthropic-messages", streamed: (_, body) => body["stream"] === true },
  { path: /\/responses$/, api: "openai-responses", streamed: (_, body) => body["stream"] === true },
  { path: /\/chat\/completions$/, api: "openai-chat", streamed: (_, body) => body["stream"] === true },
  { path: /:(stream)?generateContent$/i, api: "gemini", streamed: (path) => /:streamGenerateContent$/i.test(path) },
];

const READERS: Record<ModelApiKind, (body: Record<string, unknown>) => ConversationEntry[]> = {
  "anthropic-messages": anthropicEntries,
  "openai-responses": responsesEntries,
  "openai-chat": chatEntries,
  gemini: geminiEntries,
};
const WRITERS: Record<ModelApiKind, (turn: ModelTurn, write: TurnWriter, id: string, model: string) => Promise<void> | void> = {
  "anthropic-messages": writeAnthropic,
  "openai-responses": writeResponses,
  "openai-chat": writeChat,
  gemini: writeGemini,
};

export class ScriptedModelApi {
  readonly requests: RecordedRequest[] = [];
  readonly #scripts: Script[] = [];
  readonly #events = new EventEmitter();
  /** The turns whose one cut answer was given (`ModelTurn.cutAfter`). */
  readonly #cut = new WeakSet<ModelTurn>();
  readonly #server: Server;
  #next = 0;
  url = "";

  private constructor() {
    this.#server = createServer((req, res) => void this.#answer(req, res).catch((error: unknown) => res.destroy(error as Error)));
  }

  static async start(): Promise<ScriptedModelApi> {
    const api = new ScriptedModelApi();
    api.#server.listen(0, "127.0.0.1");
    await once(api.#server, "listening");
    api.url = `http://127.0.0.1:${(api.#server.address() as AddressInfo).port}`;
    return api;
  }

  /** Adds a script: the prompts that carry its trigger are answered with its turns. */
  script(script: Script): void {
    this.#scripts.push(script);
  }

  /** The conversation requests answered with `trigger`'s script. */
  answered(trigger: string): RecordedRequest[] {
    return this.requests.filter((r) => r.answered?.trigger === trigger);
  }

  /**
   * Resolves when a turn marked `hold` has streamed its text and waits;
   * rejects after `timeoutMs`. Ask before the prompt that reaches the turn:
   * a hold that happened before the call is not seen.
   */
  held(timeoutMs: number): Promise<void> {
    return withDeadline(once(this.#events, "held").then(() => undefined), timeoutMs, "no held turn");
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://model").pathname;
    const parts: Buffer[] = [];
    for await (const part of req) parts.push(part as Buffer);
    const raw = Buffer.concat(parts).toString("utf8");
    if (req.method === "GET" && path.endsWith("/models")) return json(res, { object: "list", data: [{ id: "scripted-model", object: "model", created: 0, owned_by: "scripted" }] });
    if (req.method === "POST" && path.endsWith("/messages/count_tokens")) return json(res, { input_tokens: 12 });
    if (req.method === "POST" && path.endsWith(":countTokens")) return json(res, { totalTokens: 12 });
    const route = req.method === "POST" ? API_OF.find((a) => a.path.test(path)) : undefined;
    const api = route?.api;
    if (route === undefined || api === undefined) return json(res, { error: { type: "not_found_error", message: `${req.method} ${path} is not scripted` } }, 404);
    const body = JSON.parse(raw || "{}") as Record<string, unknown>;
    const entries = READERS[api](body);
    const recorded: RecordedRequest = { api, path, body, entries };
    const tools = body["tools"];
    const picked = Array.isArray(tools) && tools.length > 0 ? pickTurn(this.#scripts, entries) : undefined;
    if (picked) recorded.answered = { trigger: picked.script.trigger, turn: picked.turn };
    this.requests.push(recorded);
    const scripted = picked ? (picked.script.turns[picked.turn] ?? SCRIPT_END) : SIDE_ANSWER;
    const streamed = route.streamed(path, body);
    // A cut answer is the text so far held open, its connection closed where the hold would wait.
    const cut = streamed && scripted.cutAfter !== undefined && !this.#cut.has(scripted);
    if (cut) this.#cut.add(scripted);
    const turn: ModelTurn = cut ? { text: (scripted.text ?? []).slice(0, scripted.cutAfter), hold: true } : scripted;
    if (streamed) res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const writer: TurnWriter = {
      streamed,
      event: (data, name) => res.write(`${name === undefined ? "" : `event: ${name}\n`}data: ${JSON.stringify(data)}\n\n`),
      data: (payload) => res.write(`data: ${payload}\n\n`),
      json: (data) => json(res, data),
      end: () => res.end(),
      hold: async () => {
        if (cut) {
          // Once what was written has left: the agent reads the start of the answer, then the connection ends mid-stream.
          if (res.socket) res.socket.end();
          else res.destroy();
          return;
        }
        this.#events.emit("held");
        // Held until the agent hangs up (a cancelled turn) or the endpoint closes.
        if (!res.destroyed) await once(res, "close");
      },
    };
    await WRITERS[api](turn, writer, String(++this.#next), typeof body["model"] === "string" ? body["model"] : "scripted-model");
  }
}

function json(res: ServerResponse, body: unknown, status = 200): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
