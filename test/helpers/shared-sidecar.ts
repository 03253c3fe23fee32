// The real sidecar one describe block shares: started before its first test,
// closed after its last. Each test's clients and the SSE streams it opened are
// closed when the test ends, so one that fails leaves nothing open for the next.
import { after, afterEach, before } from "node:test";
import { createClient, type HttpProtocol, type OpenedSse, type ProtocolClient } from "./http-clients.ts";
import { startSidecar } from "./sidecar-server.ts";
import type { StartedServer } from "./transport-server.ts";

export interface SharedSidecar {
  /** A new client of the sidecar for the running test. */
  client(protocol: HttpProtocol): ProtocolClient;
  /** The running test's streams, to close when it ends. */
  readonly streams: OpenedSse[];
}

/** Registers the hooks in the describe block it is called in. */
export function sharedSidecar(): SharedSidecar {
  let server: StartedServer | undefined;
  const clients: ProtocolClient[] = [];
  const streams: OpenedSse[] = [];
  before(async () => {
    server = await startSidecar();
  });
  after(async () => {
    await server?.close();
  });
  afterEach(async () => {
    for (const stream of streams.splice(0)) stream.close();
    for (const client of clients.splice(0)) await client.close();
  });
  return {
    streams,
    client(protocol) {
      if (server === undefined) throw new Error("the sidecar has not started: ask for a client in a test");
      const client = createClient(protocol, server.url);
      clients.push(client);
      return client;
    },
  };
}
