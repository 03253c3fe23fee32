// An ACP agent app served as an agent process is run: newline-delimited
// JSON-RPC on this process's stdin and stdout.
import { Readable, Writable } from "node:stream";
import { ndJsonStream, type Stream } from "@agentclientprotocol/sdk";

/** An agent app of the SDK's agent API, as far as serving it goes. */
export interface ConnectableAgent {
  connect(stream: Stream): { readonly closed: Promise<void> };
}

/** Serves `app` on stdin and stdout; resolves when stdin closes. */
export async function serveOnStdio(app: ConnectableAgent): Promise<void> {
  const connection = app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>));
  await connection.closed;
}
