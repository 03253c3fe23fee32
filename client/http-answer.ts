// Small readers of an HTTP answer for the Streamable HTTP profile: its body
// (bounded), its headers, and the endpoint a base URL stands for.
import type { Readable } from "node:stream";
import { ACP_PATH } from "../protocol/acp.ts";
import type { HttpAnswer } from "./http-channel.ts";
import { ClientTransportError, TransportErrorCode } from "./transport.ts";

/** Reads a whole body up to `max` bytes; `truncate` cuts instead of failing. */
export async function readBody(body: Readable, max: number, truncate: boolean): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) {
      if (!truncate) {
        body.destroy();
        throw new ClientTransportError(TransportErrorCode.Protocol, `an HTTP answer exceeds ${max} bytes`);
      }
      chunks.push(chunk.subarray(0, chunk.length - (size - max)));
      body.destroy();
      break;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export function discard(body: Readable): void {
  body.resume();
  body.on("error", () => {});
}

export function header(answer: HttpAnswer, name: string): string | undefined {
  const value = answer.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The `/acp` endpoint for a URL given as the server's base URL or as the endpoint itself. */
export function endpointUrl(url: string | URL): URL {
  const u = new URL(url);
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    throw new ClientTransportError(TransportErrorCode.Protocol, `unsupported URL scheme ${u.protocol} (use http:// or https://)`);
  }
  if (u.pathname === "/" || u.pathname === "") u.pathname = ACP_PATH;
  return u;
}

