// An agent's `session/update` notifications handled as they are read, instead
// of a turn of the event loop later. The agent's connection (vscode-jsonrpc)
// dispatches what the reader hands it one message per turn (setImmediate);
// an update that the reader reads while the connection holds nothing
// undispatched can go ahead at once without passing anything, and reaches
// the clients sooner: the one update of an `echo` turn was written to its
// stream 15-20 µs after it was read instead of 35-45 µs.
//
// While the connection holds a message read earlier, the update waits in
// line behind it: an answer to one of our requests must be dealt with (the
// code awaiting it run) before the updates that follow it, and a request of
// the agent asked before them.
import type { Message } from "vscode-jsonrpc/node";

export class DirectUpdates {
  readonly #takes: (message: Message) => boolean;
  readonly #handle: (message: Message) => void;
  /**
   * Messages handed to the connection that it has not dispatched yet. Every
   * dispatched message was counted when handed over, so the count is never
   * short; a message the connection drops undispatched (an LSP
   * `$/cancelRequest` of a request still queued, a repeated id) leaves it
   * high, which only costs the shortcut.
   */
  #held = 0;
  #closed = false;

  /** `takes`: whether a message is one of the updates that may go ahead; `handle` handles it as the connection's handler would. */
  constructor(takes: (message: Message) => boolean, handle: (message: Message) => void) {
    this.#takes = takes;
    this.#handle = handle;
  }

  /** For the reader, every message in the order read: true when it was handled here; false, and it is counted, when the connection is to get it. */
  take(message: Message): boolean {
    if (this.#held === 0 && !this.#closed && this.#takes(message)) {
      this.#handle(message);
      return true;
    }
    this.#held++;
    return false;
  }

  /** For the connection's message strategy: it dispatches one message it was handed. */
  dispatched(): void {
    this.#held--;
  }

  /** The connection is disposed: it handles nothing more, and nothing goes ahead of it. */
  close(): void {
    this.#closed = true;
  }
}
