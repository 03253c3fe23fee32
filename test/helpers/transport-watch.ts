// What a client transport (client/) delivers, as a test reads it: the
// messages in order, how it closed, and a wait for a message the test expects
// that has a deadline and fails at once when the transport closes first.
import type { ClientTransport, ClientTransportError } from "../../client/index.ts";
import type { JsonRpcMessage } from "../../protocol/jsonrpc.ts";

/** How long a test waits for a message it expects, in milliseconds. */
export const DEFAULT_MESSAGE_WAIT_MS = 20_000;

export interface WatchedTransport {
  /** Every message delivered, in order. */
  readonly messages: JsonRpcMessage[];
  /** Resolves once the transport closed: with its error, or undefined for a close on purpose. */
  readonly closed: Promise<ClientTransportError | undefined>;
  /** How it closed, "open" while it is not closed. */
  readonly state: { closed: ClientTransportError | undefined | "open" };
  /** The first message `pred` matches, delivered or to come; `what` names it when it does not come. */
  next(pred: (m: JsonRpcMessage) => boolean, what?: string): Promise<JsonRpcMessage>;
}

interface Waiter {
  pred: (m: JsonRpcMessage) => boolean;
  resolve: (m: JsonRpcMessage) => void;
  lost: (error: ClientTransportError | undefined) => void;
}

/** Takes the transport's onmessage, onclose and onerror (errors end in onclose, which the watch reports). */
export function watchTransport(t: ClientTransport, waitMs = DEFAULT_MESSAGE_WAIT_MS): WatchedTransport {
  const messages: JsonRpcMessage[] = [];
  const waiters = new Set<Waiter>();
  const state: WatchedTransport["state"] = { closed: "open" };
  let closeResolve: (e: ClientTransportError | undefined) => void = () => {};
  const closed = new Promise<ClientTransportError | undefined>((resolve) => {
    closeResolve = resolve;
  });
  t.onmessage = (m) => {
    messages.push(m);
    for (const w of [...waiters]) {
      if (w.pred(m)) {
        waiters.delete(w);
        w.resolve(m);
      }
    }
  };
  t.onclose = (error) => {
    state.closed = error;
    closeResolve(error);
    for (const w of [...waiters]) {
      waiters.delete(w);
      w.lost(error);
    }
  };
  t.onerror = () => {};
  return {
    messages,
    closed,
    state,
    next(pred, what = "the message waited for") {
      const found = messages.find(pred);
      if (found !== undefined) return Promise.resolve(found);
      const lostBefore = (error: ClientTransportError | undefined): Error => new Error(`the connection was lost before ${what}: ${String(error?.message)}`);
      if (state.closed !== "open") return Promise.reject(lostBefore(state.closed));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no ${what} within ${waitMs} ms`));
        }, waitMs);
        const waiter: Waiter = {
          pred,
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
          lost: (error) => {
            clearTimeout(timer);
            reject(lostBefore(error));
          },
        };
        waiters.add(waiter);
      });
    },
  };
}
