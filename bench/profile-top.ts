// Prints the functions with the most self time in a V8 .cpuprofile (as
// written by `node --cpu-prof`): `node bench/profile-top.ts FILE [COUNT]`.
// Self time is the sum of the sample intervals attributed to the function
// itself, not to what it calls; "(idle)" is time the process waited.
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";

interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}

interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  /** "name (file:line)". */
  location: string;
  selfMs: number;
  /** Share of the busy (non-idle) time, in percent. */
  percent: number;
}

export function topSelfTime(file: string, count = 15): { busyMs: number; idleMs: number; top: SelfTime[] } {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byLocation = new Map<string, number>();
  let idle = 0;
  let busy = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = nodes.get(profile.samples[i] ?? -1);
    // timeDeltas[i] is the time before sample i; the next delta is the time spent in it.
    const us = profile.timeDeltas[i + 1] ?? 0;
    if (node === undefined) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === "(idle)") {
      idle += us;
      continue;
    }
    busy += us;
    const where = url === "" ? "" : ` (${shorten(url)}:${lineNumber + 1})`;
    const key = `${functionName || "(anonymous)"}${where}`;
    byLocation.set(key, (byLocation.get(key) ?? 0) + us);
  }
  const top = [...byLocation]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([location, us]) => ({ location, selfMs: us / 1000, percent: busy === 0 ? 0 : (100 * us) / busy }));
  return { busyMs: busy / 1000, idleMs: idle / 1000, top };
}

function shorten(url: string): string {
  if (!url.startsWith("file://")) return url;
  const path = fileURLToPath(url);
  const nm = path.lastIndexOf("node_modules/");
  if (nm !== -1) return path.slice(nm + "node_modules/".length);
  return relative(process.cwd(), path);
}

export function formatTop(file: string, count = 15): string {
  const { busyMs, idleMs, top } = topSelfTime(file, count);
  const lines = [`${relative(process.cwd(), file)}: busy ${busyMs.toFixed(0)} ms, idle ${idleMs.toFixed(0)} ms`];
  for (const t of top) lines.push(`  ${t.percent.toFixed(1).padStart(5)}%  ${t.selfMs.toFixed(0).padStart(7)} ms  ${t.location}`);
  return lines.join("\n");
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, count] = process.argv.slice(2);
  if (file === undefined) {
    process.stderr.write("usage: node bench/profile-top.ts FILE.cpuprofile [COUNT]\n");
    process.exit(2);
  }
  process.stdout.write(`${formatTop(file, count === undefined ? 15 : Number(count))}\n`);
}
