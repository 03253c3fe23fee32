// The running sidecar as the deferred flow sees it, from the extension's Ctx:
// its URL and the access token, cached so that `current()` can answer at once
// (the token lives in SecretStorage, which is asynchronous); the jobs' states
// as the sidecar announces them on the control connection; and the permission
// requests a job's run waits on.
import * as vscode from "vscode";
import type { DeferredJobEvent } from "../../protocol/control.ts";
import type { Ctx } from "../ctx.ts";
import { DEFAULT_EDITOR_DEFERRED_STATES_KEPT } from "../limits.ts";
import type { DeferredServer } from "./index.ts";

export function deferredServerOf(ctx: Ctx): DeferredServer & vscode.Disposable {
  const changed = new vscode.EventEmitter<void>();
  const jobChanged = new vscode.EventEmitter<DeferredJobEvent>();
  let token: string | undefined;
  /**
   * The last event of each job, newest last. An event may come before the
   * POST that made the job has its answer: the flow reads it from here.
   */
  const states = new Map<string, DeferredJobEvent>();
  const refresh = (): void => {
    if (!ctx.isRunning) {
      // What a stopped sidecar said is stale: its jobs run again when it is back.
      states.clear();
      changed.fire();
      return;
    }
    ctx.tokens.get().then(
      (t) => {
        token = t;
        changed.fire();
      },
      () => undefined,
    );
  };
  const subscriptions = [
    // A rotated token is stored first, then sent to the sidecar: follow the store.
    ctx.onDidChangeState(refresh),
    ctx.extension.secrets.onDidChange(refresh),
    ctx.onDeferredJob((event) => {
      states.delete(event.requestId);
      states.set(event.requestId, event);
      if (states.size > DEFAULT_EDITOR_DEFERRED_STATES_KEPT) states.delete(states.keys().next().value as string);
      jobChanged.fire(event);
    }),
  ];
  refresh();
  return {
    current: () => (ctx.isRunning && ctx.server && token ? { url: ctx.server.url, token } : undefined),
    onDidChange: changed.event,
    jobState: (requestId) => states.get(requestId),
    onDidChangeJob: jobChanged.event,
    waitingPermission: (requestId) => ctx.permissions.entries().find((e) => e.state === "pending" && e.info.requestId === requestId)?.info,
    onDidChangePermissions: ctx.permissions.onDidChange,
    dispose() {
      for (const s of subscriptions) s.dispose();
      changed.dispose();
      jobChanged.dispose();
    },
  };
}
