// What the extension returns from activate(): read-only state and events for
// other extensions (and for the extension test suite, which drives the real
// extension through it rather than through internals).
import type * as vscode from "vscode";
import type { ServerInfo, StatusSnapshot } from "../protocol/control.ts";
import type { Ctx, ServerState } from "./ctx.ts";
import type { DeferredFeature } from "./deferred/index.ts";
import type { DeferredJobEntry } from "./deferred/job-list.ts";
import type { PermissionEntry } from "./permissions/permission-center.ts";

export interface AcpRemoteApi {
  readonly state: ServerState;
  readonly server: ServerInfo | undefined;
  readonly status: StatusSnapshot | undefined;
  readonly lastError: string | undefined;
  /** Pid of the sidecar process, while it runs. */
  readonly sidecarPid: number | undefined;
  onDidChangeState: vscode.Event<ServerState>;
  onDidChangeStatus: vscode.Event<StatusSnapshot | undefined>;
  /** Permission requests as the editor shows them. */
  permissions(): PermissionEntry[];
  onDidChangePermissions: vscode.Event<void>;
  /** The access token remote clients use. */
  token(): Promise<string>;
  /** The deferred completions this editor submitted, as the Deferred completions view lists them. */
  deferredJobs(): DeferredJobEntry[];
}

export function createApi(ctx: Ctx, deferred: Pick<DeferredFeature, "jobs">): AcpRemoteApi {
  return {
    get state() {
      return ctx.state;
    },
    get server() {
      return ctx.server;
    },
    get status() {
      return ctx.status;
    },
    get lastError() {
      return ctx.lastError;
    },
    get sidecarPid() {
      return ctx.sidecarPid;
    },
    onDidChangeState: ctx.onDidChangeState,
    onDidChangeStatus: ctx.onDidChangeStatus,
    permissions: () => ctx.permissions.entries(),
    onDidChangePermissions: ctx.permissions.onDidChange,
    token: () => ctx.tokens.get(),
    deferredJobs: () => deferred.jobs(),
  };
}
