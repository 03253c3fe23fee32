// Permissions panel script: renders the requests it is sent and posts the
// chosen option back; a proposed change opens in the diff editor (Open Diff),
// where the request can be answered too. A settled request says who answered
// what ("Allowed on Pixel 8 — Allow once"). No inline handlers (the CSP
// forbids them): listeners only.
import type { ToolCallContent, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { PermissionsFromWebview, PermissionsToWebview, PermissionView } from "../webview-messages.ts";
import { type PermissionResolution, resolutionLabel } from "../../protocol/permission-outcome.ts";
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

function diffView(d: Extract<ToolCallContent, { type: "diff" }>, permissionId: string): HTMLElement {
  const pre = el("pre", { class: "diff" });
  for (const line of (d.oldText ?? "").split("\n")) if (d.oldText) pre.append(el("span", { class: "del" }, `- ${line}\n`));
  for (const line of d.newText.split("\n")) pre.append(el("span", { class: "add" }, `+ ${line}\n`));
  const open = el("button", { type: "button", class: "secondary open-diff", "data-path": d.path, title: `Show the change to ${d.path} in a diff editor` }, "Open Diff");
  open.addEventListener("click", () => vscode.postMessage({ type: "openDiff", permissionId, path: d.path }));
  return el("div", {}, el("div", { class: "diff-head" }, el("span", { class: "muted" }, d.path), open), pre);
}

/** Who answered what, or why nobody did; a request settled before the sidecar said how is withdrawn. */
function outcomeOf(entry: PermissionView): PermissionResolution {
  if (entry.resolution) return entry.resolution;
  if (entry.state === "answered") return { ...(entry.chosenOptionId === undefined ? {} : { optionId: entry.chosenOptionId }), by: "editor" };
  return {};
}

function details(toolCall: ToolCallUpdate, permissionId: string): HTMLElement {
  const box = el("div", { class: "details" });
  const command = commandOf(toolCall);
  if (command) box.append(el("div", { class: "muted" }, "Command"), el("pre", {}, command));
  for (const c of toolCall.content ?? []) {
    if (c.type === "diff") box.append(diffView(c, permissionId));
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
  c.append(head, el("div", { class: "muted" }, `${info.agent} · session ${info.sessionId}`), details(info.toolCall, info.permissionId));
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
  } else {
    const outcome = outcomeOf(entry);
    c.append(el("p", { class: `outcome${outcome.optionId === undefined ? " muted" : ""}` }, resolutionLabel(outcome, info.options)));
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
