// Waiting for a response that refused a write (its buffer is full) to take
// what it holds: on `drain`, or on `close` when the peer went away and no
// drain will come. Each wait removes both of its listeners: a long stream
// waits many times.

/** The part of a writable (a response, a stream) a wait for drain uses. */
export interface Drainable {
  once(event: "drain" | "close", listener: () => void): unknown;
  off(event: "drain" | "close", listener: () => void): unknown;
}

/** Resolves when `out` drains or closes. */
export function drainedOrClosed(out: Drainable): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      out.off("drain", done);
      out.off("close", done);
      resolve();
    };
    out.once("drain", done);
    out.once("close", done);
  });
}
