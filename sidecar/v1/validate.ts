// Validation of a chat completion request body. Returns early with a 400 whose
// `param` names the offending field (OpenAI's convention: `messages[0].role`).
// Whether the model exists is the backends' question (404), asked by the route.
import type { ChatMessage, ChatRequest, Role } from "../../protocol/v1.ts";
import { invalidRequest } from "./errors.ts";

const ROLES: ReadonlySet<string> = new Set<Role>(["system", "developer", "user", "assistant", "tool"]);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

/** Content as a string, or an array of text parts (`{type: "text", text}`), flattened to text. */
function contentText(message: Record<string, unknown>, param: string): string {
  const content = message["content"];
  if (typeof content === "string") return content;
  // An assistant turn that only called tools has no content.
  if ((content === null || content === undefined) && message["role"] === "assistant" && Array.isArray(message["tool_calls"])) {
    return "";
  }
  if (!Array.isArray(content)) {
    throw invalidRequest(`${param} must be a string or an array of text parts, not ${describe(content)}.`, param);
  }
  const parts: string[] = [];
  content.forEach((part: unknown, j) => {
    const partParam = `${param}[${j}]`;
    if (!isObject(part)) throw invalidRequest(`${partParam} must be an object, not ${describe(part)}.`, partParam);
    if (part["type"] !== "text") {
      throw invalidRequest(
        `${partParam}.type must be "text"; other content parts (images, audio, files) are not supported.`,
        `${partParam}.type`,
      );
    }
    if (typeof part["text"] !== "string") {
      throw invalidRequest(`${partParam}.text must be a string.`, `${partParam}.text`);
    }
    parts.push(part["text"]);
  });
  return parts.join("\n");
}

function message(value: unknown, i: number): ChatMessage {
  const param = `messages[${i}]`;
  if (!isObject(value)) throw invalidRequest(`${param} must be an object, not ${describe(value)}.`, param);
  const role = value["role"];
  if (typeof role !== "string" || !ROLES.has(role)) {
    throw invalidRequest(
      `${param}.role must be one of system, developer, user, assistant, tool; got ${JSON.stringify(role) ?? "nothing"}.`,
      `${param}.role`,
    );
  }
  const result: ChatMessage = { role: role as Role, content: contentText(value, `${param}.content`) };
  const name = value["name"];
  if (name !== undefined) {
    if (typeof name !== "string") throw invalidRequest(`${param}.name must be a string.`, `${param}.name`);
    result.name = name;
  }
  return result;
}

function optionalBoolean(body: Record<string, unknown>, field: string): boolean {
  const value = body[field];
  if (value === undefined || value === null) return false;
  if (typeof value !== "boolean") throw invalidRequest(`${field} must be a boolean, not ${describe(value)}.`, field, "invalid_type");
  return value;
}

/** Spec: "Deferred request (submission)": `messages` and `model` required, `deferred` a boolean. */
export function validateChatRequest(body: unknown): ChatRequest {
  if (!isObject(body)) throw invalidRequest(`The request body must be a JSON object, not ${describe(body)}.`, null, "invalid_type");
  const model = body["model"];
  if (model === undefined) throw invalidRequest("model is required.", "model", "missing_required_parameter");
  if (typeof model !== "string" || model.length === 0) throw invalidRequest("model must be a non-empty string.", "model", "invalid_type");
  const messages = body["messages"];
  if (messages === undefined) throw invalidRequest("messages is required.", "messages", "missing_required_parameter");
  if (!Array.isArray(messages)) throw invalidRequest(`messages must be an array, not ${describe(messages)}.`, "messages", "invalid_type");
  if (messages.length === 0) throw invalidRequest("messages must contain at least one message.", "messages");
  const deferred = optionalBoolean(body, "deferred");
  const stream = optionalBoolean(body, "stream");
  if (deferred && stream) {
    throw invalidRequest("stream cannot be used with deferred: a deferred result is fetched whole, once.", "stream");
  }
  const n = body["n"];
  if (n !== undefined && n !== null && n !== 1) throw invalidRequest("Only n = 1 is supported.", "n");
  let includeUsage = false;
  const streamOptions = body["stream_options"];
  if (streamOptions !== undefined && streamOptions !== null) {
    if (!isObject(streamOptions)) throw invalidRequest("stream_options must be an object.", "stream_options", "invalid_type");
    const include = streamOptions["include_usage"];
    if (include !== undefined && typeof include !== "boolean") {
      throw invalidRequest("stream_options.include_usage must be a boolean.", "stream_options.include_usage", "invalid_type");
    }
    includeUsage = include === true;
  }
  return { model, messages: messages.map(message), deferred, stream, includeUsage, raw: body };
}
