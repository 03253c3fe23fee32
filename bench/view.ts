// Session view benchmark: renders a 10,000-update turn (streamed Markdown,
// thoughts, tool calls with diffs, plan updates) in headless chromium and
// prints the time to render it and the page's memory. Two ways: all updates
// at once (a replay), and streamed, a batch per animation frame (a live
// turn), where the longest frame tells whether scrolling stays smooth.
// Run: node_modules/.bin/node bench/view.ts [updates] [per-frame]
import type { SessionNotification } from "@agentclientprotocol/sdk";
import { call, openViewPage } from "../test/web/page.ts";
import { chunks, n, text } from "../test/web/fixtures.ts";

const UPDATES = Number(process.argv[2] ?? 10_000);
const PER_FRAME = Number(process.argv[3] ?? 25);

const PARAGRAPH =
  "The parser reads **one token** at a time and keeps `state` small; see [the notes](https://example.com/notes).\n\n" +
  "```ts\nfunction next(): Token {\n  return lexer.read();\n}\n```\n\n- first\n- second\n\n";

/** A turn of `count` updates: a thought, then text segments of 400 chunks separated by a tool call, its update and a plan. */
function turn(count: number): SessionNotification[] {
  const out: SessionNotification[] = [...chunks("agent_thought_chunk", "Let me look at the parser first. ".repeat(20), 24)];
  let call = 0;
  while (out.length < count) {
    const segment = chunks("agent_message_chunk", PARAGRAPH.repeat(40), 24).slice(0, 400);
    out.push(...segment);
    call++;
    const id = `call-${call}`;
    out.push(n({ sessionUpdate: "tool_call", toolCallId: id, title: `Edit src/file${call}.ts`, kind: "edit", status: "in_progress", locations: [{ path: `src/file${call}.ts`, line: call }] }));
    out.push(
      n({
        sessionUpdate: "tool_call_update",
        toolCallId: id,
        status: "completed",
        content: [{ type: "diff", path: `src/file${call}.ts`, oldText: "a\nb\nc\n".repeat(50), newText: "a\nB\nc\n".repeat(50) }, { type: "content", content: text("ok") }],
      }),
    );
    out.push(n({ sessionUpdate: "plan", entries: Array.from({ length: 5 }, (_, i) => ({ content: `Step ${i + 1}`, priority: "medium" as const, status: i < call % 6 ? ("completed" as const) : ("pending" as const) })) }));
  }
  return out.slice(0, count);
}

async function main(): Promise<void> {
  const updates = turn(UPDATES);
  const chars = updates.reduce((sum, u) => sum + ("content" in u.update && u.update.content && "text" in u.update.content ? u.update.content.text.length : 0), 0);
  const vp = await openViewPage();
  try {
    for (const mode of ["replay", "streamed"] as const) {
      const page = await vp.open({ width: 390, height: 844 });
      const cdp = await page.context().newCDPSession(page);
      await cdp.send("Performance.enable");
      await cdp.send("HeapProfiler.collectGarbage");
      const before = await heapUsed(cdp);
      await call(page, "turnStarted");
      const result = await page.evaluate(
        async ({ list, mode, perFrame }) => {
          const { view } = (window as unknown as { sv: { view: { update(n: unknown): void; turnEnded(r: string): void } } }).sv;
          const frame = (): Promise<number> => new Promise((r) => requestAnimationFrame(r));
          const start = performance.now();
          const gaps: number[] = [];
          if (mode === "replay") {
            for (const u of list) view.update(u);
            view.turnEnded("end_turn");
          } else {
            let last = await frame();
            for (let i = 0; i < list.length; i += perFrame) {
              for (const u of list.slice(i, i + perFrame)) view.update(u);
              const now = await frame();
              gaps.push(now - last);
              last = now;
            }
            view.turnEnded("end_turn");
          }
          await frame();
          await frame();
          gaps.sort((a, b) => a - b);
          const at = (q: number): number => gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))] ?? 0;
          return { ms: performance.now() - start, p50: at(0.5), p95: at(0.95), longest: at(1), nodes: document.getElementsByTagName("*").length };
        },
        { list: updates, mode, perFrame: PER_FRAME },
      );
      await cdp.send("HeapProfiler.collectGarbage");
      const after = await heapUsed(cdp);
      const frames = Math.ceil(updates.length / PER_FRAME);
      console.log(
        `${mode.padEnd(8)} ${updates.length} updates (${(chars / 1024).toFixed(0)} KiB of text)` +
          (mode === "streamed" ? `, ${PER_FRAME} per frame (${frames} frames)` : "") +
          `: rendered in ${result.ms.toFixed(0)} ms` +
          (mode === "streamed" ? `, frame p50 ${result.p50.toFixed(1)} / p95 ${result.p95.toFixed(1)} / max ${result.longest.toFixed(1)} ms` : "") +
          `; JS heap ${mib(before)} → ${mib(after)} MiB after GC; ${result.nodes} DOM elements`,
      );
      await page.close();
    }
  } finally {
    await vp.close();
  }
}

async function heapUsed(cdp: { send(method: "Performance.getMetrics"): Promise<{ metrics: { name: string; value: number }[] }> }): Promise<number> {
  const { metrics } = await cdp.send("Performance.getMetrics");
  return metrics.find((m) => m.name === "JSHeapUsedSize")?.value ?? 0;
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

await main();
