// Validation of a chat completion request body with zod. The first problem
// answers 400 with `param` naming the offending field in OpenAI's form
// (`messages[0].content[0].type`). Whether the model exists is the backends'
// question (404), asked by the route.
import { z } from "zod";
import type { ChatMessage, ChatRequest } from "../../protocol/v1.ts";
import { invalidRequest } from "./errors.ts";

const ROLES = ["system", "developer", "user", "assistant", "tool"] as const;

const TextPart = z.object({
  type: z.literal("text", { error: 'must be "text"; other content parts (images, audio, files) are not supported' }),
  text: z.string(),
});

const Message = z
  .object({
    role: z.enum(ROLES, { error: `must be one of ${ROLES.join(", ")}` }),
    content: z.union([z.string(), z.array(TextPart)], { error: "must be a string or an array of text parts" }).nullish(),
    name: z.string().optional(),
    tool_calls: z.array(z.unknown()).optional(),
  })
  .superRefine((m, ctx) => {
    // An assistant turn that only called tools has no content; every other message has some.
    if ((m.content === null || m.content === undefined) && !(m.role === "assistant" && m.tool_calls !== undefined)) {
      ctx.addIssue({ code: "custom", path: ["content"], message: "must be a string or an array of text parts" });
    }
  });

const ChatBody = z
  .looseObject({
    model: z.string({ error: (i) => (i.input === undefined ? "is required" : "must be a string") }).min(1, "must not be empty"),
    messages: z
      .array(Message, { error: (i) => (i.input === undefined ? "is required" : "must be an array") })
      .min(1, "must contain at least one message"),
    deferred: z.boolean({ error: "must be a boolean" }).nullish(),
    stream: z.boolean({ error: "must be a boolean" }).nullish(),
    n: z.literal(1, { error: "must be 1: only one choice is supported" }).nullish(),
    stream_options: z.looseObject({ include_usage: z.boolean({ error: "must be a boolean" }).optional() }).nullish(),
  })
  .superRefine((body, ctx) => {
    if (body.deferred === true && body.stream === true) {
      ctx.addIssue({ code: "custom", path: ["stream"], message: "cannot be used with deferred: a deferred result is fetched whole, once" });
    }
  });

type Path = ReadonlyArray<PropertyKey>;

/** OpenAI's `param`: `messages[0].role`; null for the body itself. */
function paramOf(path: Path): string | null {
  let param = "";
  for (const key of path) param += typeof key === "number" ? `[${key}]` : `${param ? "." : ""}${String(key)}`;
  return param || null;
}

/**
 * The issue to report. A union (string or parts) that failed reports the
 * problem inside the branch the value's type matched, e.g. a part's `type`.
 */
function innermost(issue: z.core.$ZodIssue, prefix: Path = []): { issue: z.core.$ZodIssue; path: Path } {
  const path = [...prefix, ...issue.path];
  if (issue.code === "invalid_union") {
    const matched = issue.errors.find((branch) => !(branch.length === 1 && branch[0]!.code === "invalid_type" && branch[0]!.path.length === 0));
    if (matched?.[0]) return innermost(matched[0], path);
  }
  return { issue, path };
}

function valueAt(value: unknown, path: Path): unknown {
  let at = value;
  for (const key of path) at = typeof at === "object" && at !== null ? (at as Record<PropertyKey, unknown>)[key] : undefined;
  return at;
}

function contentText(content: string | Array<{ text: string }> | null | undefined): string {
  if (typeof content === "string") return content;
  return (content ?? []).map((p) => p.text).join("\n");
}

/** Spec: "Deferred request (submission)": `messages` and `model` required, `deferred` a boolean. */
export function validateChatRequest(body: unknown): ChatRequest {
  const parsed = ChatBody.safeParse(body);
  if (!parsed.success) {
    const { issue, path } = innermost(parsed.error.issues[0]!);
    const param = paramOf(path);
    const missing = issue.code === "invalid_type" && valueAt(body, path) === undefined;
    const code = missing ? "missing_required_parameter" : issue.code === "invalid_type" ? "invalid_type" : null;
    const message = param === null ? `The request body must be a JSON object.` : `${param} ${issue.message}.`;
    throw invalidRequest(message, param, ...(code ? [code] : []));
  }
  const b = parsed.data;
  const messages: ChatMessage[] = b.messages.map((m) => ({
    role: m.role,
    content: contentText(m.content),
    ...(m.name !== undefined ? { name: m.name } : {}),
  }));
  return {
    model: b.model,
    messages,
    deferred: b.deferred === true,
    stream: b.stream === true,
    includeUsage: b.stream_options?.include_usage === true,
    // The body as sent: an upstream provider gets every field the client sent.
    raw: body as Record<string, unknown>,
  };
}
