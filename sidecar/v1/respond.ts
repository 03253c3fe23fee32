// Response writing that works on both HTTP/1.1 and HTTP/2 compatibility
// responses (their `writeHead` overloads cannot be called through the union).
import type { HttpResponse } from "../http/types.ts";

export function writeHead(res: HttpResponse, status: number, headers: Record<string, string | number>): void {
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}

export function sendJson(res: HttpResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  writeHead(res, status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
