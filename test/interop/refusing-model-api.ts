// The model API the published agents call, on this machine: every request is
// refused with 401 and a message no agent writes by itself, so a prompt fails
// at once and the test can tell the agent's own error when the remote client
// receives it. It speaks no provider's protocol beyond that refusal, in the
// shape Google's and OpenAI's clients both read (`error.message`).
import { createServer, type Server } from "node:http";

export const REFUSAL = "API key not valid (refused by the interop test endpoint)";

export interface RefusingModelApi {
  url: string;
  /** `METHOD /path` of each request, in order. */
  requests: string[];
  close(): Promise<void>;
}

export async function startRefusingModelApi(): Promise<RefusingModelApi> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(401, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { code: 401, status: "UNAUTHENTICATED", type: "invalid_request_error", message: REFUSAL } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
