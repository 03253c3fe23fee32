// What the editor has already been shown of a session, so that the replay a
// `session/load` produces after a reconnect is not shown a second time.
//
// A replay is not a byte-for-byte copy of what went out live: a server may
// merge consecutive text chunks of one kind into one (acp-remote's journal
// does), or split them differently, and it may have dropped its oldest
// entries. So text chunks (agent message, agent thought, user message) are
// remembered as the text they added up to, per kind, and a replayed chunk is
// recognised when its text comes next in (or later in) what was seen; any
// other update is recognised by its exact JSON, each seen one matched once.
import { createHash } from "node:crypto";
import { isRecord } from "../protocol/jsonrpc.ts";
import { DEFAULT_CONNECT_MAX_REMEMBERED_CHARS, DEFAULT_CONNECT_MAX_REMEMBERED_UPDATES } from "./limits.ts";

const TEXT_CHUNKS: ReadonlySet<string> = new Set(["agent_message_chunk", "agent_thought_chunk", "user_message_chunk"]);
/** The user's own prompt: the editor wrote it, whether or not the agent echoed it live. */
const USER_CHUNK = "user_message_chunk";

function hash(params: unknown): string {
  return createHash("sha256").update(JSON.stringify(params)).digest("base64url").slice(0, 22);
}

/** Kind and text of a text chunk update, else undefined. */
function textChunk(params: unknown): { kind: string; text: string } | undefined {
  const update = isRecord(params) && isRecord(params["update"]) ? params["update"] : undefined;
  const kind = update?.["sessionUpdate"];
  if (typeof kind !== "string" || !TEXT_CHUNKS.has(kind)) return undefined;
  const content = update?.["content"];
  if (!isRecord(content) || content["type"] !== "text" || typeof content["text"] !== "string") return undefined;
  return { kind, text: content["text"] };
}

function updateKind(params: unknown): unknown {
  return isRecord(params) && isRecord(params["update"]) ? params["update"]["sessionUpdate"] : undefined;
}

export class SeenUpdates {
  readonly #counts = new Map<string, number>();
  #total = 0;
  readonly #text = new Map<string, string>();

  /**
   * Remembers one `session/update`'s params the editor was shown. Past the
   * bounds the rest is not remembered, so a very long session may see the
   * end of its replay again.
   */
  remember(params: unknown): void {
    const chunk = textChunk(params);
    if (chunk !== undefined) {
      const before = this.#text.get(chunk.kind) ?? "";
      if (before.length + chunk.text.length <= DEFAULT_CONNECT_MAX_REMEMBERED_CHARS) this.#text.set(chunk.kind, before + chunk.text);
      return;
    }
    if (this.#total >= DEFAULT_CONNECT_MAX_REMEMBERED_UPDATES) return;
    const h = hash(params);
    this.#counts.set(h, (this.#counts.get(h) ?? 0) + 1);
    this.#total++;
  }

  get empty(): boolean {
    return this.#total === 0 && [...this.#text.values()].every((t) => t.length === 0);
  }

  /** A filter for one replay, against what has been seen so far. */
  replay(): ReplayFilter {
    return new ReplayFilter(new Map(this.#counts), this.#total, new Map(this.#text));
  }
}

export class ReplayFilter {
  readonly #counts: Map<string, number>;
  #left: number;
  readonly #text: Map<string, string>;
  readonly #cursor = new Map<string, number>();

  constructor(counts: Map<string, number>, total: number, text: Map<string, string>) {
    this.#counts = counts;
    this.#left = total;
    this.#text = text;
  }

  /** Whether everything seen has been matched: the replay has caught up. */
  get done(): boolean {
    if (this.#left > 0) return false;
    for (const [kind, text] of this.#text) if ((this.#cursor.get(kind) ?? 0) < text.length) return false;
    return true;
  }

  /**
   * What to forward of one replayed update: undefined when the editor has
   * already been shown it, else the update's params, with the text the editor
   * has already been shown cut off the front of a chunk that goes on past it
   * (the server merged what the editor saw with what came while it was away).
   */
  pass(params: unknown): unknown {
    const chunk = textChunk(params);
    if (chunk !== undefined) {
      const rest = this.#matchText(chunk.kind, chunk.text);
      if (rest === "") return undefined;
      if (chunk.kind === USER_CHUNK) return undefined;
      return rest === chunk.text ? params : withText(params, rest);
    }
    const h = hash(params);
    const count = this.#counts.get(h) ?? 0;
    if (count > 0) {
      this.#counts.set(h, count - 1);
      this.#left--;
      return undefined;
    }
    return updateKind(params) === USER_CHUNK ? undefined : params;
  }

  /** The part of a replayed chunk's text the editor has not been shown. */
  #matchText(kind: string, text: string): string {
    if (text.length === 0) return "";
    const seen = this.#text.get(kind) ?? "";
    const cursor = this.#cursor.get(kind) ?? 0;
    // Next in order, or further on (the server dropped what came between).
    const at = seen.startsWith(text, cursor) ? cursor : seen.indexOf(text, cursor);
    if (at !== -1) {
      this.#cursor.set(kind, at + text.length);
      return "";
    }
    // What is left of the seen text, and then more.
    const left = seen.slice(cursor);
    if (left.length > 0 && text.startsWith(left)) {
      this.#cursor.set(kind, seen.length);
      return text.slice(left.length);
    }
    return text;
  }
}

/** A copy of a text chunk update's params with another text. */
function withText(params: unknown, text: string): unknown {
  const p = params as { update: { content: Record<string, unknown> } & Record<string, unknown> } & Record<string, unknown>;
  return { ...p, update: { ...p.update, content: { ...p.update.content, text } } };
}
