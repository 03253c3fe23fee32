// Lines of one shape that differ in one string only: an agent's flood of
// `session/update` text chunks is the same JSON line over and over but for
// the chunk's text. Parsing each whole cost a relay about a microsecond a
// line, the largest part of what it spent on an update.
//
// A template is learned from a line that was parsed: when the message, written
// back with JSON.stringify, is that very line (compact, in its own key
// order), and holds nothing but plain objects on the way to one string field
// (`path`) and primitive values beside them, the line is cut around that
// string into a prefix and a suffix. A later line that is the prefix, a JSON
// string's content, and the suffix, exactly, is that message with another
// string: JSON.parse would give the same value. The content is taken as it
// is when it holds no quote, backslash or control character, or else parsed
// alone as a string literal; a line that does not fit any template is parsed
// whole, as before, and so is every line whose content is not a valid string
// (it then fails or succeeds exactly as a full parse of it does).

/**
 * Templates kept at once, in templates: one per session and kind of chunk
 * being streamed. Past it the oldest learned goes; a line is matched to its
 * template by its prefix, so their number costs nothing per line.
 */
const MAX_TEMPLATES = 64;
/** After a line that taught nothing, this many lines are not learned from, doubling up to MAX_LEARN_SKIP: a peer that writes spaced JSON costs a serialization once in a while only; in lines. */
const MAX_LEARN_SKIP = 1024;
/**
 * A string's content that holds none of the characters it may hold only
 * escaped, or not at all: taken as it is. Anchored and negated, it runs a
 * third faster than a search for one of them (bench/line-read.ts).
 */
const PLAIN = /^[^"\\\u0000-\u001f]*$/;
/** Stands in for the string while the template is written: control characters are always escaped, so it is found as text. */
const MARKER = "\u0000\u0001";
const MARKER_JSON = JSON.stringify(MARKER).slice(1, -1);

interface Template {
  suffix: string;
  /** The message the template was learned from, never handed out: copies are made along `path`. */
  message: Record<string, unknown>;
}

export class LineTemplates {
  readonly #path: readonly string[];
  /**
   * `"<last key of path>":"`: in a line of a template, its first occurrence
   * ends the prefix (a quote inside a string is always escaped, so it is the
   * key itself), which finds the template.
   */
  readonly #key: string;
  /** By prefix: the line up to where the string's content starts. */
  readonly #templates = new Map<string, Template>();
  /** The template of the last line read through one, and its prefix: a flood's lines are looked up without hashing. */
  #lastPrefix = "";
  #last: Template | undefined;
  #skip = 0;
  #skipNext = 1;

  /** `path`: the keys from the message down to the string that varies, e.g. ["params", "update", "content", "text"]. */
  constructor(path: readonly string[]) {
    this.#path = path;
    this.#key = `${JSON.stringify(path[path.length - 1])}:"`;
  }

  /** The message `line` parses to, when it fits a learned template; undefined otherwise (parse it). */
  match(line: string): Record<string, unknown> | undefined {
    if (this.#templates.size === 0) return undefined;
    let t: Template | undefined;
    let start: number;
    // A flood's next line: it starts with the last prefix, in which the key
    // first occurs at its end (learn), so it does in the line too.
    if (this.#last !== undefined && line.slice(0, this.#lastPrefix.length) === this.#lastPrefix) {
      t = this.#last;
      start = this.#lastPrefix.length;
    } else {
      const at = line.indexOf(this.#key);
      if (at === -1) return undefined;
      start = at + this.#key.length;
      const prefix = line.slice(0, start);
      t = this.#templates.get(prefix);
      if (t === undefined) return undefined;
      this.#lastPrefix = prefix;
      this.#last = t;
    }
    const end = line.length - t.suffix.length;
    // Compared as a slice: endsWith on a slice of a longer string (a line of a read) was several times slower.
    if (end < start || line.slice(end) !== t.suffix) return undefined;
    const content = line.slice(start, end);
    const text = PLAIN.test(content) ? content : stringLiteral(content);
    return text === undefined ? undefined : this.#with(t.message, 0, text);
  }

  /** A message was parsed from `line` and passed every check a parsed line gets: its shape may become a template. */
  learn(line: string): void {
    if (this.#skip > 0) {
      this.#skip--;
      return;
    }
    const learned = this.#template(line);
    if (learned === undefined) {
      this.#skip = this.#skipNext;
      this.#skipNext = Math.min(MAX_LEARN_SKIP, this.#skipNext * 2);
      return;
    }
    this.#skipNext = 1;
    this.#templates.set(learned.prefix, learned.template);
    if (learned.prefix === this.#lastPrefix) this.#last = learned.template;
    if (this.#templates.size <= MAX_TEMPLATES) return;
    const oldest = this.#templates.keys().next().value as string;
    this.#templates.delete(oldest);
    if (oldest === this.#lastPrefix) this.#last = undefined;
  }

  #template(line: string): { prefix: string; template: Template } | undefined {
    // A copy of its own, which no reader of the delivered message can change.
    const message = JSON.parse(line) as unknown;
    if (!isPlainRecord(message) || !this.#shaped(message, 0)) return undefined;
    const marked = JSON.stringify(this.#with(message, 0, MARKER));
    const at = marked.indexOf(MARKER_JSON);
    if (at === -1 || marked.indexOf(MARKER_JSON, at + 1) !== -1) return undefined;
    const prefix = marked.slice(0, at);
    const suffix = marked.slice(at + MARKER_JSON.length);
    // Only a line written as JSON.stringify writes it is cut by position, and only where the key is first found.
    if (`${prefix}${JSON.stringify(this.#leaf(message)).slice(1, -1)}${suffix}` !== line) return undefined;
    if (line.indexOf(this.#key) + this.#key.length !== prefix.length) return undefined;
    return { prefix, template: { suffix, message } };
  }

  /** Plain objects down `path` to a string, primitives everywhere else. */
  #shaped(node: Record<string, unknown>, depth: number): boolean {
    const key = this.#path[depth] as string;
    for (const name in node) {
      if (!Object.hasOwn(node, name)) return false;
      const value = node[name];
      if (name === key) continue;
      if (typeof value === "object" && value !== null) return false;
    }
    if (!Object.hasOwn(node, key)) return false;
    const next = node[key];
    if (depth === this.#path.length - 1) return typeof next === "string";
    return isPlainRecord(next) && this.#shaped(next, depth + 1);
  }

  #leaf(message: Record<string, unknown>): string {
    let node: Record<string, unknown> = message;
    for (let i = 0; i < this.#path.length - 1; i++) node = node[this.#path[i] as string] as Record<string, unknown>;
    return node[this.#path[this.#path.length - 1] as string] as string;
  }

  /** A copy of `node` along the path (keys in their order), with `text` at its end. */
  #with(node: Record<string, unknown>, depth: number, text: string): Record<string, unknown> {
    const key = this.#path[depth] as string;
    const copy = { ...node };
    copy[key] = depth === this.#path.length - 1 ? text : this.#with(node[key] as Record<string, unknown>, depth + 1, text);
    return copy;
  }
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
}

/** The value of `"content"` as a JSON string literal, or undefined when that is not one string. */
function stringLiteral(content: string): string | undefined {
  try {
    const value: unknown = JSON.parse(`"${content}"`);
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}
