// A session's title, as the session list, the editor's tab and notifications
// name it: the agent's own (`session_info_update`), or else the start of the
// session's first prompt, so that two sessions in one folder can be told
// apart before (or without) an agent that names its sessions. The hub tells
// the title it gives as a `session_info_update` of its own, journaled, so a
// client that watched the turn and one that loads the session later show it alike.
import type { ContentBlock } from "@agentclientprotocol/sdk";
import { DEFAULT_SESSION_TITLE_CHARS } from "../limits.ts";

/** Control characters (a title is one line) and runs of white space read as one space. */
const BLANKS = /[\s\u0000-\u001f\u007f-\u009f]+/g;

/**
 * The title a prompt gives a session: the first line of its text that has
 * any (a linked resource's name when it has no text), white space collapsed,
 * shortened at a word to DEFAULT_SESSION_TITLE_CHARS; undefined when the
 * prompt has nothing to read (an image alone).
 */
export function promptTitle(prompt: readonly ContentBlock[], max = DEFAULT_SESSION_TITLE_CHARS): string | undefined {
  const texts = prompt.flatMap((block) => (block.type === "text" ? [block.text] : []));
  const links = prompt.flatMap((block) => (block.type === "resource_link" ? [block.name] : []));
  for (const text of [...texts, ...links]) {
    for (const line of text.split(/\r\n|\r|\n/)) {
      const oneLine = line.replace(BLANKS, " ").trim();
      if (oneLine !== "") return shorten(oneLine, max);
    }
  }
  return undefined;
}

/** `text` in at most `max` characters (code points): cut at the last space of its first half or later, then "…". */
function shorten(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  const head = chars.slice(0, max - 1).join("");
  const space = head.lastIndexOf(" ");
  const cut = space >= head.length / 2 ? head.slice(0, space) : head;
  return `${cut.trimEnd()}…`;
}
