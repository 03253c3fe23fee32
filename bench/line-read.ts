// The cost of reading one agent line, on its own: a flood's `session/update`
// text chunks (about 290 bytes each, as the fast agent writes them) read the
// way the agent link reads them (common/line-templates.ts, a line of a learned
// shape), beside JSON.parse of the same lines in the same run. Lines are cut
// from one decoded read, as the reader cuts them (slices of a longer string).
//
//   node bench/line-read.ts [rounds]
import { LineTemplates } from "../common/line-templates.ts";
import { updateMessage } from "./prompt-script.ts";
import { summarize } from "./stats.ts";

/** Lines in one read: about 64 KiB, as the fast agent writes them. */
const LINES_PER_READ = 224;
const TEXT_FIELD = ["params", "update", "content", "text"];
const RUNS = 7;

const read = Array.from({ length: LINES_PER_READ }, (_, i) => updateMessage("fast-0c2f5f0e-8d7b-4a53-9f0e-1f8a2b3c4d5e", `${"x".repeat(95)}${String(i).padStart(5, "0")}`)).join("\n");

function lines(): string[] {
  const out: string[] = [];
  let from = 0;
  for (;;) {
    const end = read.indexOf("\n", from);
    out.push(end === -1 ? read.slice(from) : read.slice(from, end));
    if (end === -1) return out;
    from = end + 1;
  }
}

/** Nanoseconds per line of `readLine` over `rounds` reads. */
function perLine(rounds: number, readLine: (line: string) => unknown): number {
  let kept = 0;
  const start = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++) for (const line of lines()) if (readLine(line) !== undefined) kept++;
  const ns = Number(process.hrtime.bigint() - start);
  if (kept !== rounds * LINES_PER_READ) throw new Error(`${rounds * LINES_PER_READ - kept} lines not read`);
  return ns / kept;
}

const rounds = Number(process.argv[2] ?? 2_000);
const templates = new LineTemplates(TEXT_FIELD);
templates.learn(lines()[0] as string);
const ours: number[] = [];
const parse: number[] = [];
for (let run = 0; run < RUNS; run++) {
  ours.push(perLine(rounds, (line) => templates.match(line)));
  parse.push(perLine(rounds, (line) => JSON.parse(line)));
}
const o = summarize(ours).median;
const p = summarize(parse).median;
process.stdout.write(`line read, ${rounds * LINES_PER_READ} lines a run, median of ${RUNS} runs: template ${o.toFixed(0)} ns, JSON.parse ${p.toFixed(0)} ns (${(o / p).toFixed(2)}× JSON.parse)\n`);
