// Reads a JSON request body: 415 unless it is JSON, 413 past the limit (from
// Content-Length before reading, or while reading a chunked body), 400 when
// it does not parse.
import type { HttpRequest } from "../server/http/types.ts";
import { bodyTooLarge, invalidRequest, unsupportedMediaType } from "./errors.ts";

function isJson(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

export async function readJsonBody(req: HttpRequest, maxBytes: number): Promise<unknown> {
  const contentType = req.headers["content-type"];
  if (!isJson(contentType)) {
    req.resume();
    throw unsupportedMediaType(contentType);
  }
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    throw bodyTooLarge(maxBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      req.resume();
      throw bodyTooLarge(maxBytes);
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw invalidRequest(
      `The request body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
      null,
      "invalid_json",
    );
  }
}
