// The running sidecar as the deferred flow sees it, from the extension's Ctx:
// its URL and the access token, cached so that `current()` can answer at once
// (the token lives in SecretStorage, which is asynchronous).
import * as vscode from "vscode";
import type { Ctx } from "../ctx.ts";
import type { DeferredServer } from "./index.ts";

export function deferredServerOf(ctx: Ctx): DeferredServer & vscode.Disposable {
  const changed = new vscode.EventEmitter<void>();
  let token: string | undefined;
  const refresh = (): void => {
    if (!ctx.isRunning) {
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
  // A rotated token is stored first, then sent to the sidecar: follow the store.
  const subscriptions = [ctx.onDidChangeState(refresh), ctx.extension.secrets.onDidChange(refresh)];
  refresh();
  return {
    current: () => (ctx.isRunning && ctx.server && token ? { url: ctx.server.url, token } : undefined),
    onDidChange: changed.event,
    dispose() {
      for (const s of subscriptions) s.dispose();
      changed.dispose();
    },
  };
}
