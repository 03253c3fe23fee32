// A remote ACP client we did not write: the SDK's client over its own
// Streamable HTTP stream (`createHttpStream`), pointed at the sidecar the
// extension started. Its permission handler answers only when the test says.
import { client, methods, type ClientContext, type RequestPermissionRequest, type RequestPermissionResponse, type SessionNotification } from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";

export interface PermissionAsk {
  params: RequestPermissionRequest;
  /** Aborted when the server withdraws the request (`$/cancel_request`: answered elsewhere). */
  signal: AbortSignal;
  answer(response: RequestPermissionResponse): void;
}

export interface RemoteClient {
  updates: SessionNotification[];
  asks: PermissionAsk[];
  /** Settles when the client's connection ends. */
  closed: Promise<unknown>;
  run<T>(op: (ctx: ClientContext) => Promise<T>): Promise<T>;
  close(): void;
}

export function agentText(updates: SessionNotification[], sessionId: string): string {
  return updates
    .filter((u) => u.sessionId === sessionId)
    .map((u) => (u.update.sessionUpdate === "agent_message_chunk" && u.update.content.type === "text" ? u.update.content.text : ""))
    .join("");
}

/** Opens a connection; `run` executes operations on it until `close()`. */
export function connectRemote(url: string, token: string, agent?: string): RemoteClient {
  const updates: SessionNotification[] = [];
  const asks: PermissionAsk[] = [];
  const app = client({ name: "remote-test-client" })
    .onNotification(methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(
      methods.client.session.requestPermission,
      ({ params, signal }) =>
        new Promise<RequestPermissionResponse>((resolve) => {
          asks.push({ params, signal, answer: resolve });
        }),
    );
  const stream = createHttpStream(`${url}/acp${agent ? `?agent=${encodeURIComponent(agent)}` : ""}`, { headers: { authorization: `Bearer ${token}` } });
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => (release = r));
  let ready: (ctx: ClientContext) => void = () => undefined;
  const context = new Promise<ClientContext>((r) => (ready = r));
  const closed = app
    .connectWith(stream, async (ctx) => {
      ready(ctx);
      await held;
    })
    .catch((err: unknown) => err);
  return {
    updates,
    asks,
    closed,
    run: async (op) => op(await context),
    close: () => {
      for (const a of asks) a.answer({ outcome: { outcome: "cancelled" } });
      release();
    },
  };
}
