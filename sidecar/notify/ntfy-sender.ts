// ntfy as a second channel, for people who do not install web apps: one topic
// (`--notify ntfy:URL/TOPIC`, e.g. ntfy:https://ntfy.sh/my-secret-topic) gets
// the same notices as a device's Web Push, published as JSON. A permission
// notice carries ntfy `http` actions: the ntfy app sends the POST to the
// server's answer endpoint itself, with the one-use capability in the body.
// An access token for the ntfy server (env ACP_REMOTE_NTFY_TOKEN) goes in
// `Authorization`; it never reaches an agent (children get no ACP_REMOTE_*).
import type { NotificationPayload } from "../../protocol/notify.ts";
import { NoticeKind } from "../../protocol/notify.ts";
import { DEFAULT_NOTIFY_SEND_TIMEOUT_MS } from "./limits.ts";

/** The scheme of `--notify ntfy:URL/TOPIC`. */
const NTFY_SCHEME = "ntfy:";

export interface NtfyTarget {
  /** The ntfy server's base URL, where JSON is published (`https://ntfy.sh/`). */
  server: string;
  topic: string;
}

/** Parses `ntfy:URL/TOPIC`; throws with what is wrong. */
export function parseNtfyTarget(text: string): NtfyTarget {
  if (!text.startsWith(NTFY_SCHEME)) throw new Error(`"${text}" is not ntfy:URL/TOPIC`);
  let url: URL;
  try {
    url = new URL(text.slice(NTFY_SCHEME.length));
  } catch {
    throw new Error(`"${text}": ${text.slice(NTFY_SCHEME.length)} is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error(`"${text}": the ntfy server must be an http(s) URL`);
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") throw new Error(`"${text}": give the topic's URL only, no query, fragment or credentials (the token goes in ACP_REMOTE_NTFY_TOKEN)`);
  const segments = url.pathname.split("/");
  const topic = segments.pop() ?? "";
  if (!/^[-_A-Za-z0-9]{1,64}$/.test(topic)) throw new Error(`"${text}": the topic (the last part of the path) must be 1 to 64 letters, digits, - or _`);
  url.pathname = `${segments.join("/")}/`;
  return { server: url.href, topic };
}

/** One ntfy action (https://docs.ntfy.sh/publish/#action-buttons). */
type NtfyAction =
  | { action: "http"; label: string; url: string; method: "POST"; headers: Record<string, string>; body: string; clear: boolean }
  | { action: "view"; label: string; url: string; clear: boolean };

/** The message as ntfy's JSON publishing takes it. */
export interface NtfyMessage {
  topic: string;
  title: string;
  message: string;
  priority: number;
  tags: string[];
  /** Opened when the notification is tapped. */
  click?: string;
  actions?: NtfyAction[];
}

const TAGS: Record<NotificationPayload["kind"], string> = {
  [NoticeKind.Permission]: "question",
  [NoticeKind.TurnEnded]: "white_check_mark",
  [NoticeKind.Failed]: "x",
};

export interface NtfySenderOptions {
  target: NtfyTarget;
  /** Bearer token of the ntfy server, if it wants one. */
  token?: string;
  timeoutMs?: number;
}

export class NtfySender {
  readonly #options: NtfySenderOptions;

  constructor(options: NtfySenderOptions) {
    this.#options = options;
  }

  /**
   * The ntfy form of a notification. `answerUrl` is the server's answer
   * endpoint and `base` the web client's address, both as the phone reaches them.
   */
  message(payload: NotificationPayload, answerUrl: string, base: string): NtfyMessage {
    const actions: NtfyAction[] = (payload.answer?.actions ?? []).map((a) => ({
      action: "http",
      label: a.label,
      url: answerUrl,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ capability: payload.answer?.capability, optionId: a.optionId }),
      clear: true,
    }));
    return {
      topic: this.#options.target.topic,
      title: payload.title,
      message: payload.body,
      priority: payload.kind === NoticeKind.Permission ? 4 : 3,
      tags: [TAGS[payload.kind]],
      click: new URL(payload.url, `${base}/`).href,
      ...(actions.length === 0 ? {} : { actions }),
    };
  }

  /** Publishes; rejects with what the ntfy server said when it refused. */
  async publish(message: NtfyMessage): Promise<void> {
    const response = await fetch(this.#options.target.server, {
      method: "POST",
      headers: { "content-type": "application/json", ...(this.#options.token === undefined ? {} : { authorization: `Bearer ${this.#options.token}` }) },
      body: JSON.stringify(message),
      signal: AbortSignal.timeout(this.#options.timeoutMs ?? DEFAULT_NOTIFY_SEND_TIMEOUT_MS),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`ntfy answered ${response.status}: ${text.slice(0, 200)}`);
  }
}
