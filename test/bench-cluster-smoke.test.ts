// The cluster benchmark keeps working: `node bench/cluster.ts --smoke` (one
// round, tiny counts, real Redis, HAProxy and five sidecars) runs to its end
// and exits 0, and its JSON has every row of every setup measured once,
// exactly-once held on every deferred setup, and every relayed update
// arrived. No timing is asserted.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { METRICS, type ClusterReport, type ClusterRow } from "../bench/cluster-report.ts";
import { clusterToolsMissing } from "./helpers/cluster.ts";
import { NODE } from "./helpers/connect-child.ts";

const BENCH = fileURLToPath(new URL("../bench/cluster.ts", import.meta.url));
/** The smoke run takes well under a minute alone; the machine may be busy. In milliseconds. */
const SMOKE_TIMEOUT_MS = 10 * 60_000;

const skip = clusterToolsMissing("haproxy", { redis: true });
if (skip !== undefined) process.stdout.write(`# cluster benchmark smoke test skipped: ${skip}\n`);

describe("bench/cluster.ts --smoke", { skip: skip ?? false, timeout: SMOKE_TIMEOUT_MS }, () => {
  const dir = mkdtempSync(join(tmpdir(), "acp-remote-bench-cluster-smoke-"));
  const out = join(dir, "cluster-smoke.json");
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  let output = "";
  let report: ClusterReport | undefined;
  let child: ChildProcess | undefined;

  before(async () => {
    child = spawn(NODE, [BENCH, "--smoke", `--out=${out}`], { stdio: ["ignore", "pipe", "pipe"] });
    const running = child;
    running.stdout?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    running.stderr?.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    exit = await new Promise((resolve) => running.once("close", (code, signal) => resolve({ code, signal })));
    try {
      report = JSON.parse(readFileSync(out, "utf8")) as ClusterReport;
    } catch {
      // Asserted below, with the output.
    }
  }, { timeout: SMOKE_TIMEOUT_MS });
  after(() => {
    // A run cut short by the timeout: SIGINT, so that it stops its servers on the way out.
    if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
    rmSync(dir, { recursive: true, force: true });
  });

  it("exits 0 with no error and writes its JSON", () => {
    assert.deepEqual(exit, { code: 0, signal: null }, output);
    assert.ok(report, `no report written:\n${output}`);
    assert.deepEqual(report.errors, []);
    assert.equal(report.mode, "smoke");
    assert.equal(report.runs, 1);
  });

  it("every row of every setup is there, measured once", () => {
    assert.ok(report, output);
    const rows: readonly ClusterRow[] = report.rows;
    for (const spec of METRICS) {
      for (const setup of spec.setups) {
        const row = rows.find((r) => r.section === spec.section && r.metric === spec.metric && r.setup === setup);
        assert.ok(row, `${spec.section} ${setup} ${spec.metric}: row produced`);
        assert.equal(row.summary.runs, 1, `${spec.section} ${setup} ${spec.metric}: measured once (notes: ${report?.notes.join("; ")})`);
        assert.ok(Number.isFinite(row.summary.median), `${spec.section} ${setup} ${spec.metric}: a number`);
      }
    }
    assert.equal(report.rows.length, METRICS.reduce((n, spec) => n + spec.setups.length, 0));
  });

  it("exactly-once held on every deferred setup and no relayed update was lost", () => {
    assert.ok(report, output);
    const names = Object.keys(report.checks);
    assert.equal(names.filter((n) => n.startsWith("deferred ")).length, 4, names.join("; "));
    assert.equal(names.filter((n) => n.startsWith("relay ")).length, 4, names.join("; "));
    for (const [name, held] of Object.entries(report.checks)) assert.equal(held, true, `${name}\n${report.notes.join("\n")}`);
  });
});
