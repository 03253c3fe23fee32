// `--agent NAME=COMMAND`: the command is one string split the way a POSIX shell
// splits words (quotes and backslashes), with no expansion of any kind: no
// variables, globs, `~` or command substitution. It is then spawned without a
// shell, so what the user quoted is exactly what the agent receives.
import type { AgentSpec } from "../../protocol/agent-spec.ts";

export class CommandLineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CommandLineError";
  }
}

/** Characters a backslash keeps special inside double quotes (POSIX 2.2.3). */
const DOUBLE_QUOTE_ESCAPABLE = new Set(["$", "`", '"', "\\", "\n"]);

function isBlank(c: string): boolean {
  return c === " " || c === "\t" || c === "\n" || c === "\r";
}

/** Splits a command line into words. Throws CommandLineError on an unterminated quote or a trailing backslash. */
export function parseCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = "";
  /** A word has started, even if it is empty so far (`""` is an empty argument). */
  let inWord = false;
  let i = 0;
  while (i < line.length) {
    const c = line[i]!;
    if (isBlank(c)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      i++;
      continue;
    }
    inWord = true;
    if (c === "\\") {
      // POSIX 2.2.1: a backslash keeps the next character literal; a
      // backslash-newline is a line continuation and disappears.
      if (i + 1 >= line.length) throw new CommandLineError("the command line ends with a backslash");
      const next = line[i + 1]!;
      if (next !== "\n") word += next;
      i += 2;
      continue;
    }
    if (c === "'") {
      // POSIX 2.2.2: everything up to the next single quote is literal.
      const end = line.indexOf("'", i + 1);
      if (end === -1) throw new CommandLineError(`unterminated single quote at column ${i + 1}`);
      word += line.slice(i + 1, end);
      i = end + 1;
      continue;
    }
    if (c === '"') {
      // POSIX 2.2.3: literal except for backslash before $ ` " \ newline.
      let j = i + 1;
      let closed = false;
      while (j < line.length) {
        const d = line[j]!;
        if (d === '"') {
          closed = true;
          break;
        }
        if (d === "\\" && j + 1 < line.length && DOUBLE_QUOTE_ESCAPABLE.has(line[j + 1]!)) {
          if (line[j + 1] !== "\n") word += line[j + 1];
          j += 2;
          continue;
        }
        word += d;
        j++;
      }
      if (!closed) throw new CommandLineError(`unterminated double quote at column ${i + 1}`);
      i = j + 1;
      continue;
    }
    word += c;
    i++;
  }
  if (inWord) words.push(word);
  return words;
}

/** Parses `--agent NAME=COMMAND` into an AgentSpec. Throws CommandLineError with a message fit for the user. */
export function parseAgentFlag(value: string): AgentSpec {
  const eq = value.indexOf("=");
  if (eq === -1) throw new CommandLineError(`--agent expects NAME=COMMAND, got ${JSON.stringify(value)}`);
  const name = value.slice(0, eq).trim();
  if (name.length === 0) throw new CommandLineError(`--agent ${JSON.stringify(value)}: the agent name is empty`);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) {
    // The name travels in URLs (`/acp?agent=NAME`) and as a /v1 model id.
    throw new CommandLineError(`--agent ${JSON.stringify(value)}: the agent name may hold only letters, digits, ".", "_" and "-", and starts with a letter or digit`);
  }
  let words: string[];
  try {
    words = parseCommandLine(value.slice(eq + 1));
  } catch (error) {
    throw new CommandLineError(`--agent ${name}: ${(error as Error).message}`);
  }
  const [command, ...args] = words;
  if (command === undefined || command.length === 0) throw new CommandLineError(`--agent ${name}: the command is empty`);
  return { name, command, args };
}

/** The words as one line that parseCommandLine splits back into the same words (for logs and views). */
export function formatCommandLine(words: readonly string[]): string {
  return words.map((word) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`)).join(" ");
}
