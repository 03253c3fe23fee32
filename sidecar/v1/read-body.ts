// Reads a JSON request body of /v1: 415 unless it is JSON, 413 past the limit
// (the shared bounded reader, ../server/http/read-body.ts), 400 when it nests
// deeper than DEFAULT_MAX_JSON_DEPTH (common/json-depth.ts) or does not parse.
import type { HttpRequest } from "../http/types.ts";
import { readBody } from "../http/read-body.ts";
import { jsonTextDeeperThan } from "../../common/json-depth.ts";
import { DEFAULT_MAX_JSON_DEPTH } from "../limits.ts";
import { bodyTooLarge, invalidRequest, tooDeep, unsupportedMediaType } from "./errors.ts";

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
  const text = (await readBody(req, maxBytes, { tooLarge: bodyTooLarge })).toString("utf8");
  // Before the parse, which costs more than the scan on a body of nested brackets.
  if (jsonTextDeeperThan(text, DEFAULT_MAX_JSON_DEPTH)) throw tooDeep(DEFAULT_MAX_JSON_DEPTH);
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
