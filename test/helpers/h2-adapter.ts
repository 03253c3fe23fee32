// Serves a web-standard handler (`Request` in, `Response` out, as the SDK's
// `AcpServer.handleRequest` is) on node:http2: the SDK ships a Node adapter for
// HTTP/1.1 only, and the spec wants Streamable HTTP on HTTP/2.
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { drainedOrClosed } from "./drained.ts";

export type WebHandler = (request: Request) => Promise<Response>;

/** Largest request body the adapter reads, in bytes. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

async function readBody(req: Http2ServerRequest): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error(`request body exceeds ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function toHeaders(req: Http2ServerRequest): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith(":") || value === undefined) continue; // pseudo-headers are not fields
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}

export function createH2Handler(handler: WebHandler): (req: Http2ServerRequest, res: Http2ServerResponse) => void {
  return (req, res) => {
    void serve(handler, req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(error instanceof Error ? error.message : String(error));
      } else {
        res.stream.close();
      }
    });
  };
}

async function serve(handler: WebHandler, req: Http2ServerRequest, res: Http2ServerResponse): Promise<void> {
  const abort = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) abort.abort(new Error("the HTTP/2 stream closed"));
  });
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const request = new Request(`http://${req.authority}${req.url}`, {
    method: req.method,
    headers: toHeaders(req),
    ...(hasBody ? { body: new Uint8Array(await readBody(req)) } : {}),
    signal: abort.signal,
  });
  const response = await handler(request);
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name === "set-cookie" || name === "connection" || name === "keep-alive" || name === "transfer-encoding") return;
    headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.once("close", () => void reader.cancel().catch(() => {}));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (res.destroyed) return;
    if (!res.write(value)) await drainedOrClosed(res);
  }
  if (!res.destroyed) res.end();
}
