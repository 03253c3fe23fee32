// Permissions panel script: renders the requests it is sent and posts the
// chosen option back. No inline handlers (the CSP forbids them): listeners only.
import type { ToolCallContent, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { PermissionsFromWebview, PermissionsToWebview, PermissionView } from "../webview-messages.ts";
import { el, vscodeApi } from "./lib/vscode-api.ts";

const vscode = vscodeApi<PermissionsFromWebview>();
const root = document.getElementById("root")!;

function commandOf(toolCall: ToolCallUpdate): string | undefined {
  const raw = toolCall.rawInput as { command?: unknown; args?: unknown } | null | undefined;
  if (!raw || typeof raw !== "object") return undefined;
  if (typeof raw.command === "string") return Array.isArray(raw.args) ? [raw.command, ...raw.args.map(String)].join(" ") : raw.command;
  if (Array.isArray(raw.command)) return raw.command.map(String).join(" ");
  return undefined;
}

function diffView(d: Extract<ToolCallContent, { type: "diff" }>): HTMLElement {
  const pre = el("pre", { class: "diff" });
  for (const line of (d.oldText ?? "").split("\n")) if (d.oldText) pre.append(el("span", { class: "del" }, `- ${line}\n`));
  for (const line of d.newText.split("\n")) pre.append(el("span", { class: "add" }, `+ ${line}\n`));
  return el("div", {}, el("div", { class: "muted" }, d.path), pre);
}

function details(toolCall: ToolCallUpdate): HTMLElement {
  const box = el("div", { class: "details" });
  const command = commandOf(toolCall);
  if (command) box.append(el("div", { class: "muted" }, "Command"), el("pre", {}, command));
  for (const c of toolCall.content ?? []) {
    if (c.type === "diff") box.append(diffView(c));
    else if (c.type === "content" && c.content.type === "text") box.append(el("pre", {}, c.content.text));
    else if (c.type === "terminal") box.append(el("div", { class: "muted" }, `Terminal ${c.terminalId}`));
  }
  for (const loc of toolCall.locations ?? []) box.append(el("div", { class: "muted" }, `${loc.path}${loc.line ? `:${loc.line}` : ""}`));
  return box;
}

function card(entry: PermissionView, serverRunning: boolean): HTMLElement {
  const { info } = entry;
  const title = info.toolCall.title ?? "Tool call";
  const c = el("section", { class: `card ${entry.state === "pending" ? "" : "settled"}`, "data-permission-id": info.permissionId, "data-state": entry.state, "aria-label": title });
  const head = el("h2", {}, title, " ");
  if (info.toolCall.kind) head.append(el("span", { class: "badge" }, info.toolCall.kind));
  c.append(head, el("div", { class: "muted" }, `${info.agent} · session ${info.sessionId}`), details(info.toolCall));
  if (entry.state === "pending") {
    const row = el("div", { class: "options", role: "group", "aria-label": "Answer" });
    for (const o of info.options) {
      const b = el("button", { type: "button", "data-option-id": o.optionId, class: o.kind.startsWith("allow") ? "" : "secondary" }, o.name);
      if (!serverRunning) b.setAttribute("disabled", "");
      b.addEventListener("click", () => {
        row.querySelectorAll("button").forEach((other) => other.setAttribute("disabled", ""));
        vscode.postMessage({ type: "answer", permissionId: info.permissionId, optionId: o.optionId });
      });
      row.append(b);
    }
    c.append(row);
  } else if (entry.state === "answered") {
    const chosen = info.options.find((o) => o.optionId === entry.chosenOptionId);
    c.append(el("p", { class: "outcome" }, `Answered here: ${chosen?.name ?? entry.chosenOptionId ?? ""}`));
  } else {
    c.append(el("p", { class: "outcome muted" }, "Withdrawn: answered by the remote client, or the turn ended."));
  }
  return c;
}

window.addEventListener("message", (event: MessageEvent<PermissionsToWebview>) => {
  const m = event.data;
  if (m.type !== "permissions") return;
  const pending = m.entries.filter((e) => e.state === "pending").length;
  root.replaceChildren(
    el("h1", {}, "Permission requests"),
    el("p", { class: "muted" }, pending === 0 ? "Nothing waits for an answer." : `${pending} waiting for an answer.`),
    ...m.entries.map((e) => card(e, m.serverRunning)),
  );
  // Keyboard users land on the first option of the oldest pending request.
  const first = root.querySelector<HTMLButtonElement>("section[data-state=pending] button:not([disabled])");
  if (first && document.hasFocus()) first.focus();
});
vscode.postMessage({ type: "ready" });
