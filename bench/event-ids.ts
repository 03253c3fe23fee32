// What a flood's SSE event ids leave in the old generation: the events of a
// flood (`id: <tag>-<number>` and a message, gathered and joined in batches
// as the SSE sink writes them, then dropped) built with the number's text from
// common/decimal-text.ts, beside the same built with V8's own conversion
// (`${n}`), in the same run. Old-space growth is read after a young-generation
// collection, before a major one would empty it.
//
//   node bench/event-ids.ts [events]
import { setFlagsFromString, getHeapSpaceStatistics } from "node:v8";
import { runInNewContext } from "node:vm";
import { decimalText } from "../common/decimal-text.ts";
import { updateMessage } from "./prompt-script.ts";
import { summarize } from "./stats.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as (options?: { type: "major" | "minor" }) => void;

const RUNS = 5;
/** Events joined into one write, about as many as fill the sink's batch. */
const EVENTS_PER_BATCH = 200;
const PREFIX = "id: 0c2f5f0e-";
const message = updateMessage("0c2f5f0e-8d7b-4a53-9f0e-1f8a2b3c4d5e", "x".repeat(100));

const oldSpace = (): number => getHeapSpaceStatistics().find((s) => s.space_name === "old_space")?.space_used_size ?? 0;

/** Kilobytes the old generation grew by over `events` events whose ids `text` writes, numbered from `first`. */
function growth(events: number, first: number, text: (n: number) => string): number {
  gc({ type: "major" });
  const before = oldSpace();
  let written = 0;
  let batch: string[] = [];
  for (let seq = first; seq < first + events; seq++) {
    batch.push(`${PREFIX}${text(seq)}\ndata: ${message}`);
    if (batch.length === EVENTS_PER_BATCH) {
      written += batch.join("\n\n").length;
      batch = [];
    }
  }
  // What survived the young generation now is what the flood promoted.
  gc({ type: "minor" });
  gc({ type: "minor" });
  if (written === 0) throw new Error("nothing written");
  return (oldSpace() - before) / 1024;
}

const events = Number(process.argv[2] ?? 400_000);
const ours: number[] = [];
const v8s: number[] = [];
for (let run = 0; run < RUNS; run++) {
  // Numbers not converted before in this process, for both.
  const first = 1_000_000 + run * 2 * events;
  ours.push(growth(events, first, decimalText));
  v8s.push(growth(events, first + events, (n) => `${n}`));
}
const o = summarize(ours).median;
const v = summarize(v8s).median;
process.stdout.write(`event ids, ${events} events a run, median of ${RUNS} runs: old space grew ${o.toFixed(0)} KB with decimalText, ${v.toFixed(0)} KB with \`\${n}\` (${(o / Math.max(v, 1)).toFixed(3)}×)\n`);
