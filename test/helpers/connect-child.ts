// `acp-remote connect` as the editor sees it: a child process
// (`node sidecar/cli/main.ts connect ...`) driven on its stdio by the ACP SDK's own
// client, the way Zed or JetBrains drive an agent they spawned.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { client, methods, ndJsonStream, type ClientApp, type ClientContext, type SessionNotification } from "@agentclientprotocol/sdk";
import { eventually } from "./eventually.ts";

export const NODE = new URL("../../node_modules/.bin/node", import.meta.url).pathname;
export const CLI = new URL("../../sidecar/cli/main.ts", import.meta.url).pathname;

export interface ConnectChild {
  child: ChildProcessWithoutNullStreams;
  /** Everything written on stderr so far. */
  stderr: () => string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  /** Waits until stderr contains `text`. */
  waitForLog: (text: string | RegExp, timeoutMs?: number) => Promise<void>;
  kill: () => Promise<void>;
}

export function spawnConnect(args: string[], env: Record<string, string> = {}): ConnectChild {
  const child = spawn(NODE, [CLI, "connect", ...args], {
    env: { ...process.env, ACP_REMOTE_TOKEN: "", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let err = "";
  const waiters = new Set<() => void>();
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    err += chunk;
    for (const w of waiters) w();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    stderr: () => err,
    exited,
    waitForLog(text, timeoutMs = 60_000) {
      const matches = (): boolean => (typeof text === "string" ? err.includes(text) : text.test(err));
      if (matches()) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`stderr never showed ${String(text)}; it has:\n${err}`));
        }, timeoutMs);
        const check = (): void => {
          if (!matches()) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
    },
  };
}

/** What the editor saw: every session/update, and the permission requests it answered. */
export interface EditorLog {
  updates: SessionNotification[];
  permissions: string[];
}

/** The SDK client as the editor: allows every permission with its first allow option. */
export function editorApp(log: EditorLog): ClientApp {
  return client({ name: "test-editor" })
    .onNotification(methods.client.session.update, ({ params }) => {
      log.updates.push(params);
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      log.permissions.push(params.toolCall.title ?? "");
      const allow = params.options.find((o) => o.kind === "allow_once") ?? params.options[0];
      return { outcome: allow === undefined ? { outcome: "cancelled" } : { outcome: "selected", optionId: allow.optionId } };
    });
}

/** Runs `op` as the editor, on the child's stdio; then closes the child's stdin, as an editor that quits. */
export async function asEditor<T>(c: ConnectChild, log: EditorLog, op: (ctx: ClientContext) => Promise<T>): Promise<T> {
  const stream = ndJsonStream(Writable.toWeb(c.child.stdin), Readable.toWeb(c.child.stdout) as ReadableStream<Uint8Array>);
  try {
    return await editorApp(log).connectWith(stream, op);
  } finally {
    c.child.stdin.end();
  }
}

/** The text of the agent_message_chunk updates of one session, in order. */
export function agentText(log: EditorLog, sessionId: string): string {
  return log.updates
    .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk")
    .map((u) => (u.update.sessionUpdate === "agent_message_chunk" && u.update.content.type === "text" ? u.update.content.text : ""))
    .join("");
}

/** `eventually` with the check first, as the connect suites call it. */
export function waitFor(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  return eventually(what, check, timeoutMs);
}
