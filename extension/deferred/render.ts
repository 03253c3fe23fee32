// The result as a Markdown document: the content, the reasoning folded in a
// <details> block, and a footer with the request's facts; and the names a job
// goes by (its row in the view, its result document's title).
import type { CompletionResult } from "./api.ts";

/** The first line of `text` that is not blank, trimmed, cut to `max` characters. */
export function firstLine(text: string, max = 60): string {
  const line = text.split("\n").find((l) => l.trim().length > 0)?.trim() ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** The result document's file name, its tab's title: the prompt's first line and the model, as a Markdown file. */
export function resultFileName(job: { prompt: string; model: string }): string {
  // Characters a path or a file name cannot hold become spaces.
  const safe = (text: string): string => text.replace(/[\\/:*?"<>|\u0000-\u001f]+/g, " ").replace(/\s+/g, " ").trim();
  const title = safe(firstLine(job.prompt, 48)) || "result";
  return `${title} · ${safe(job.model) || "model"}.md`;
}

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
