// A scripted cleartext HTTP/2 server for client tests: `handler` answers each
// request as the test's script says. It listens on port 0 and gives the /acp
// URL; `close` ends the HTTP/2 sessions its open streams hold (so close
// returns) and stops listening.
import http2 from "node:http2";
import type { AddressInfo } from "node:net";

export interface ScriptedH2Server {
  /** `http://127.0.0.1:PORT/acp`. */
  acpUrl: string;
  close(): Promise<void>;
}

export async function startScriptedH2(handler: (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void): Promise<ScriptedH2Server> {
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => sessions.add(session));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    acpUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/acp`,
    close: () =>
      new Promise<void>((resolve) => {
        // Open streams hold their sessions; end them so close() returns.
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
}
