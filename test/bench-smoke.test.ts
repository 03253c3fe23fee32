// The benchmarks keep working: `npm run bench -- --smoke` in miniature. No
// timing is asserted, only that every row of every suite was produced for our
// server and its baselines (raw Node, the SDK's server, the SDK bridging the
// same stdio agent, the agent alone) and every flood of the flood series, that
// every target was judged, that no update was lost, and that the deferred
// service's exactly-once check held.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CAPACITY_CASES } from "../bench/capacity.ts";
import { SMOKE } from "../bench/config.ts";
import { SERIES_CASES } from "../bench/flood-series.ts";
import { LATENCY_CASES } from "../bench/latency.ts";
import { RELAY_CASES } from "../bench/relay.ts";
import type { Report } from "../bench/report.ts";
import { runBench } from "../bench/run.ts";

const dir = mkdtempSync(join(tmpdir(), "acp-remote-bench-smoke-"));
const out = join(dir, "smoke.json");
let report: Report | undefined;

test.before(async () => {
  report = await runBench({ smoke: true, out, log: () => {} });
});
test.after(() => rmSync(dir, { recursive: true, force: true }));

function rowsOf(suite: string): Report["rows"] {
  assert.ok(report, "the bench ran");
  return report.rows.filter((r) => r.suite === suite);
}

function assertMeasured(suite: string, name: string, metric: string, impls: ReadonlyArray<"ours" | "raw" | "sdk" | "bridge" | "bare">): void {
  const row = rowsOf(suite).find((r) => r.name === name && r.metric === metric);
  assert.ok(row, `${suite} ${name} ${metric}: row produced`);
  for (const impl of impls) {
    assert.equal(row.results[impl]?.runs, 1, `${suite} ${name} ${metric}: ${impl} measured (notes: ${row.notes.join("; ")})`);
    assert.ok(Number.isFinite(row.results[impl]?.median), `${suite} ${name} ${metric}: ${impl} median is a number`);
  }
}

function assertJudged(suite: string, name: string, metric: string, targets: number): void {
  const row = rowsOf(suite).find((r) => r.name === name && r.metric === metric);
  assert.equal(row?.targets.length, targets, `${suite} ${name} ${metric}: ${targets} targets judged`);
  for (const t of row?.targets ?? []) assert.ok(Number.isFinite(t.margin) || t.margin === Number.POSITIVE_INFINITY, `${suite} ${name} ${metric}: ${t.text} has a margin`);
}

test("no suite failed and the report was written as JSON", () => {
  assert.ok(report);
  assert.deepEqual(report.errors, []);
  const written = JSON.parse(readFileSync(out, "utf8")) as Report;
  assert.equal(written.rows.length, report.rows.length);
});

for (const c of RELAY_CASES) {
  test(`relay ${c.name}: fast agent through ours, raw, sdk and the SDK bridge with their CPU per update; the SDK-written agent through ours and the bridge beside the agent alone; every update delivered`, () => {
    assertMeasured("relay", c.name, "updates/s, fast agent", ["ours", "raw", "sdk", "bridge"]);
    assertJudged("relay", c.name, "updates/s, fast agent", c.http2 ? 3 : 1);
    assertMeasured("relay", c.name, "server CPU per update, fast agent", ["ours", "raw", "sdk", "bridge"]);
    assertJudged("relay", c.name, "server CPU per update, fast agent", 1);
    assertMeasured("relay", c.name, "updates/s, SDK-written agent", ["ours", "bridge", "bare"]);
    assertJudged("relay", c.name, "updates/s, SDK-written agent", 1);
    assertMeasured("relay", c.name, "server CPU per update, SDK-written agent", ["ours", "bridge"]);
    for (const metric of ["updates/s, fast agent", "updates/s, SDK-written agent"]) {
      const row = rowsOf("relay").find((r) => r.name === c.name && r.metric === metric);
      assert.equal(row?.checks["allDelivered"], true, row?.notes.join("; "));
    }
  });
}

for (const c of LATENCY_CASES) {
  test(`latency ${c.name}: p50, p99 and first update for ours, raw and sdk, and ours with the SDK-written agent`, () => {
    for (const metric of ["round trip p50, fast agent", "round trip p99, fast agent", "first update p50, fast agent", "round trip p50, SDK-written agent", "round trip p99, SDK-written agent"]) {
      assertMeasured("latency", c.name, metric, ["ours", "raw", "sdk"]);
    }
    assertJudged("latency", c.name, "round trip p50, fast agent", 1);
    assertJudged("latency", c.name, "round trip p99, fast agent", 1);
  });
}

for (const c of CAPACITY_CASES) {
  test(`capacity ${c.name}: every connection opened, RSS and time measured for ours, raw and sdk`, () => {
    for (const metric of ["connections open", "RSS per connection", "server RSS", "time to open all"]) assertMeasured("capacity", c.name, metric, ["ours", "raw", "sdk"]);
    const row = rowsOf("capacity").find((r) => r.name === c.name && r.metric === "connections open");
    assert.ok(report);
    assert.equal(row?.results.ours?.median, report.config && (report.config as { capacity: { connections: number } }).capacity.connections);
  });
}

for (const c of SERIES_CASES) {
  test(`series ${c.name}: every flood measured for ours and raw, CPU per update with its slowest quartile judged, every update delivered`, () => {
    for (const metric of [`server CPU per update, ${SMOKE.series.floods} floods`, `updates/s, ${SMOKE.series.floods} floods`]) {
      const row = rowsOf("series").find((r) => r.name === c.name && r.metric === metric);
      assert.ok(row, `series ${c.name} ${metric}: row produced`);
      for (const impl of ["ours", "raw"] as const) {
        assert.equal(row.results[impl]?.runs, SMOKE.series.floods, `series ${c.name} ${metric}: every flood of ${impl} measured (notes: ${row.notes.join("; ")})`);
        assert.ok(Number.isFinite(row.results[impl]?.q3), `series ${c.name} ${metric}: ${impl} has a slowest quartile`);
      }
      assert.equal(row.checks["allDelivered"], true, row.notes.join("; "));
    }
    assertJudged("series", c.name, `server CPU per update, ${SMOKE.series.floods} floods`, 2);
    assertJudged("series", c.name, `updates/s, ${SMOKE.series.floods} floods`, 1);
  });
}

test("deferred: submits/s and polls/s for ours and raw, and exactly-once held", () => {
  assertMeasured("deferred", "h2c", "submits/s", ["ours", "raw"]);
  assertMeasured("deferred", "h2c", "polls/s", ["ours", "raw"]);
  assertJudged("deferred", "h2c", "submits/s", 1);
  assertJudged("deferred", "h2c", "polls/s", 1);
  const row = rowsOf("deferred").find((r) => r.metric === "submits/s");
  assert.equal(row?.checks["exactlyOnce"], true, row?.notes.join("; "));
});
