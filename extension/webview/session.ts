// Session panel script: the transcript of one session, drawn from the journal
// and kept live with each session/update. Consecutive chunks of one kind merge
// into one block; a tool call is one block updated in place; the plan shows
// its latest version.
import type { ContentBlock, SessionNotification, SessionUpdate } from "@agentclientprotocol/sdk";
import type { SessionInfo } from "../../protocol/control.ts";
import type { SessionFromWebview, SessionToWebview } from "../webview-messages.ts";
import { el, vscodeApi } from "./lib/vscode-api.ts";

const vscode = vscodeApi<SessionFromWebview>();
const root = document.getElementById("root")!;

const header = el("div", { class: "toolbar" });
const title = el("h1", {}, "Session");
const meta = el("div", { class: "muted" });
const cancel = el("button", { type: "button", id: "cancel-turn", class: "secondary" }, "Cancel turn");
const close = el("button", { type: "button", id: "close-session", class: "secondary" }, "Close session");
cancel.addEventListener("click", () => vscode.postMessage({ type: "cancelTurn" }));
close.addEventListener("click", () => vscode.postMessage({ type: "closeSession" }));
header.append(title, meta, cancel, close);
const planBox = el("div", { class: "plan" });
const log = el("div", { class: "transcript", role: "log", "aria-label": "Transcript" });
root.append(header, planBox, log);

let lastKind: string | undefined;
let lastBlock: HTMLElement | undefined;
const toolCalls = new Map<string, HTMLElement>();

function text(content: ContentBlock): string {
  switch (content.type) {
    case "text":
      return content.text;
    case "resource_link":
      return `[${content.name}](${content.uri})`;
    case "resource":
      return "text" in content.resource ? content.resource.text : `[${content.resource.uri}]`;
    default:
      return `[${content.type}]`;
  }
}

const LABELS: Record<string, string> = { user_message_chunk: "You", agent_message_chunk: "Agent", agent_thought_chunk: "Thinking" };

function chunk(kind: string, content: ContentBlock): void {
  if (lastKind !== kind || !lastBlock) {
    lastBlock = el("pre", {});
    log.append(el("div", { class: `card msg ${kind}`, "data-kind": kind }, el("div", { class: "muted" }, LABELS[kind] ?? kind), lastBlock));
    lastKind = kind;
  }
  lastBlock.append(text(content));
}

function toolCall(u: Extract<SessionUpdate, { sessionUpdate: "tool_call" | "tool_call_update" }>): void {
  let block = toolCalls.get(u.toolCallId);
  if (!block) {
    block = el("div", { class: "card tool", "data-tool-call-id": u.toolCallId });
    toolCalls.set(u.toolCallId, block);
    log.append(block);
  }
  const prevTitle = block.dataset["title"] ?? "Tool call";
  const prevStatus = block.dataset["status"] ?? "pending";
  const prevKind = block.dataset["kind"] ?? "";
  const t = u.title ?? prevTitle;
  const status = u.status ?? prevStatus;
  const kind = u.kind ?? prevKind;
  block.dataset["title"] = t;
  block.dataset["status"] = status;
  block.dataset["kind"] = kind;
  const body: Node[] = [el("div", {}, el("strong", {}, t), " ", el("span", { class: "badge" }, status), kind ? ` ${kind}` : "")];
  for (const c of u.content ?? []) {
    if (c.type === "content") body.push(el("pre", {}, text(c.content)));
    if (c.type === "diff") body.push(el("div", { class: "muted" }, `diff: ${c.path}`));
  }
  if (u.content || !block.hasChildNodes()) block.replaceChildren(...body);
  else block.firstChild?.replaceWith(body[0]!);
  lastKind = undefined;
}

function apply(n: SessionNotification): void {
  const u = n.update;
  switch (u.sessionUpdate) {
    case "user_message_chunk":
    case "agent_message_chunk":
    case "agent_thought_chunk":
      chunk(u.sessionUpdate, u.content);
      break;
    case "tool_call":
    case "tool_call_update":
      toolCall(u);
      break;
    case "plan":
      planBox.replaceChildren(
        el("div", { class: "card" }, el("div", { class: "muted" }, "Plan"), el("ul", {}, ...u.entries.map((e) => el("li", { "data-status": e.status }, `${e.status === "completed" ? "✓" : e.status === "in_progress" ? "…" : "○"} ${e.content}`)))),
      );
      break;
    default:
      break;
  }
  window.scrollTo(0, document.body.scrollHeight);
}

function showInfo(sessionId: string, s: SessionInfo | undefined): void {
  title.textContent = s?.title ?? `Session ${sessionId}`;
  meta.textContent = s
    ? `${s.agent} · ${s.state}${s.running ? " · turn running" : ""} · owner ${s.owner} · ${s.cwd}`
    : `${sessionId} · not on the server`;
  cancel.toggleAttribute("disabled", !s?.running);
  close.toggleAttribute("disabled", !s);
}

let currentId = "";
window.addEventListener("message", (event: MessageEvent<SessionToWebview>) => {
  const m = event.data;
  if (m.type === "reset") {
    currentId = m.sessionId;
    root.dataset["sessionId"] = m.sessionId;
    log.replaceChildren();
    planBox.replaceChildren();
    toolCalls.clear();
    lastKind = undefined;
    showInfo(m.sessionId, m.session);
    if (m.error) log.append(el("p", { class: "muted" }, m.error));
    for (const n of m.updates) apply(n);
  } else if (m.type === "update") {
    apply(m.notification);
  } else if (m.type === "info") {
    showInfo(currentId, m.session);
  }
});
vscode.postMessage({ type: "ready" });
