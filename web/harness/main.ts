// Test and demo page of the session view: mounts one view on #root with a host
// that records what the view asks of it, and exposes both on `window.sv` so a
// browser driver can feed updates and read the calls back. It also records
// any Content-Security-Policy violation the page causes, and the composer's
// drafts as it reports them.
import { createSessionView, type SessionViewHost } from "../session-view/index.ts";

export type HostCall = { method: keyof SessionViewHost; args: unknown[] };

const calls: HostCall[] = [];
const drafts: string[] = [];
const violations: string[] = [];
document.addEventListener("securitypolicyviolation", (e) => violations.push(`${e.violatedDirective} ${e.blockedURI}`));

const record =
  (method: keyof SessionViewHost) =>
  (...args: unknown[]): void => {
    calls.push({ method, args });
  };

const host: SessionViewHost = {
  prompt: record("prompt"),
  cancel: record("cancel"),
  answerPermission: record("answerPermission"),
  setMode: record("setMode"),
  setConfigOption: record("setConfigOption"),
  // Kept apart from the calls: every keystroke reports one.
  draftChanged: (text) => void drafts.push(text),
  // `?host=editor`: a host that opens files and diffs, as the editor's tab is; without it, as the phone, neither.
  ...(new URLSearchParams(location.search).get("host") === "editor" ? { openFile: record("openFile"), openDiff: record("openDiff") } : {}),
};

const view = createSessionView(document.getElementById("root")!, host);
Object.assign(window, { sv: { view, calls, drafts, violations } });
