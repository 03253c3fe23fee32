// A command line `node:util`'s parseArgs refused, said in one line a person
// reads: the flag that is wrong, the known flag it was probably meant to be,
// and nothing else (the usage is one `--help` away rather than printed under
// the error, where it buried it).

/**
 * The known word `word` was most likely meant to be: the nearest by edit
 * distance (a swap of two neighbours counts as one edit), if it is near enough
 * to be a slip rather than another word.
 */
export function nearestWord(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = editDistance(word, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // One slip in a short word, two in a longer one; more is another word.
  const allowed = word.replace(/^-+/, "").length <= 4 ? 1 : 2;
  return bestDistance <= allowed ? best : undefined;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) (rows[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    const above = rows[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, (above[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j] as number, (rows[i - 2]![j - 2] as number) + 1);
    }
  }
  return rows[a.length]![b.length] as number;
}

/** The flags of a parseArgs options table, as typed on a command line (`--port`, `-h`). */
function flagsOf(options: Record<string, { type: string; short?: string }>): string[] {
  return Object.entries(options).flatMap(([name, option]) => [`--${name}`, ...(option.short === undefined ? [] : [`-${option.short}`])]);
}

/**
 * parseArgs' error as one line: `unknown flag --tsl, did you mean --tls?`,
 * `--port needs a value`, `--tls takes no value`; other errors as they are.
 */
export function describeArgumentError(error: unknown, options: Record<string, { type: string; short?: string }>): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    // "Unknown option '--tsl'. To specify a positional argument …": the flag, without a value given with `=`.
    const flag = (/'([^']+)'/.exec(message)?.[1] ?? message).split("=")[0] as string;
    const meant = nearestWord(flag, flagsOf(options));
    return meant === undefined ? `unknown flag ${flag}` : `unknown flag ${flag}, did you mean ${meant}?`;
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const flag = /'(--[A-Za-z-]+)/.exec(message)?.[1];
    if (flag !== undefined && options[flag.slice(2)]?.type === "boolean") return `${flag} takes no value`;
    // A value that starts with "-" reads as another option unless written --flag=VALUE.
    if (flag !== undefined && message.includes("ambiguous")) return `${flag} needs a value (one that starts with "-" is written ${flag}=VALUE)`;
    if (flag !== undefined) return `${flag} needs a value`;
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL") {
    const word = /'([^']*)'/.exec(message)?.[1];
    if (word !== undefined) return `unexpected argument "${word}" (flags start with --)`;
  }
  return message;
}
