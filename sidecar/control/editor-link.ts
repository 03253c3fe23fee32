// The editor as the hub sees it: permission prompts and host requests travel
// to the editor over the control connection. An AbortSignal from the hub
// becomes a JSON-RPC `$/cancelRequest`, so the editor withdraws its prompt
// when the remote client answered first (docs/control-protocol.md).
import { CancellationTokenSource, type MessageConnection } from "vscode-jsonrpc";
import { ControlHostRequest, type PermissionAnswer, type PermissionInfo } from "../../protocol/control.ts";
import type { EditorLink } from "../hub/types.ts";

function tokenFor(signal: AbortSignal): { token: CancellationTokenSource["token"]; dispose(): void } {
  const source = new CancellationTokenSource();
  const cancel = (): void => source.cancel();
  if (signal.aborted) source.cancel();
  else signal.addEventListener("abort", cancel, { once: true });
  return {
    token: source.token,
    dispose: () => {
      signal.removeEventListener("abort", cancel);
      source.dispose();
    },
  };
}

export class ControlEditorLink implements EditorLink {
  readonly host: { fs: boolean; terminal: boolean };
  readonly #connection: MessageConnection;

  constructor(connection: MessageConnection, host: { fs: boolean; terminal: boolean }) {
    this.#connection = connection;
    this.host = { fs: host.fs, terminal: host.terminal };
  }

  async requestPermission(info: PermissionInfo, signal: AbortSignal): Promise<PermissionAnswer> {
    const cancel = tokenFor(signal);
    try {
      return await this.#connection.sendRequest(ControlHostRequest.requestPermission, info, cancel.token);
    } finally {
      cancel.dispose();
    }
  }

  async hostRequest(method: string, params: unknown, signal: AbortSignal): Promise<unknown> {
    const cancel = tokenFor(signal);
    try {
      // ACP host methods keep their names and shapes on the control channel.
      return await this.#connection.sendRequest<unknown>(method, params, cancel.token);
    } finally {
      cancel.dispose();
    }
  }
}
