// The result as a Markdown document: the content, the reasoning folded in a
// <details> block, and a footer with the request's facts.
import type { CompletionResult } from "./api.ts";

export function renderCompletion(completion: CompletionResult, prompt: string): string {
  const choice = completion.choices[0];
  const content = choice?.message.content ?? "";
  const reasoning = choice?.message.reasoning_content ?? "";
  const refusal = choice?.message.refusal;
  const parts = [`# ${completion.model}`, "", quote(prompt), ""];
  if (reasoning.length > 0) {
    parts.push("<details>", "<summary>Reasoning</summary>", "", reasoning, "", "</details>", "");
  }
  parts.push(content.length > 0 ? content : "_(no content)_", "");
  if (refusal) parts.push(`> **Refusal:** ${refusal}`, "");
  const usage = completion.usage;
  const facts = [
    `request \`${completion.id}\``,
    `created ${new Date(completion.created * 1000).toISOString()}`,
    `finish reason \`${choice?.finish_reason ?? "unknown"}\``,
    ...(usage ? [`${usage.prompt_tokens} prompt + ${usage.completion_tokens} completion tokens`] : []),
  ];
  parts.push("---", "", `_${facts.join(" · ")}_`, "");
  return parts.join("\n");
}

function quote(text: string): string {
  return text
    .split("\n")
    .map((line) => `> ${line}`)
    .join("\n");
}
