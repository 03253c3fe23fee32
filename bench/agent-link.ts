// The ceiling the agent link puts on the relay: how many `session/update`
// notifications per second the sidecar's reading side of an agent (the
// ndjson reader and the vscode-jsonrpc connection of sidecar/bridge) takes
// from the fixture agent's flood, beside a plain line reader that parses each
// line and nothing else; and the round trip of an `echo` turn through the
// agent alone (the floor the agent process puts under our latency, which the
// raw baseline and the SDK's in-process agent do not pay). No relaying, no
// client: only the link.
//
//   node bench/agent-link.ts [turns]
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createMessageConnection } from "vscode-jsonrpc/node";
import { Acp, PROTOCOL_VERSION } from "../protocol/acp.ts";
import { NdjsonMessageReader, NdjsonMessageWriter } from "../common/ndjson.ts";
import { echoPrompt, floodPrompt } from "./prompt-script.ts";
import { quantileSorted, summarize } from "./stats.ts";

const UPDATES = 20_000;
const BYTES = 100;

type Call = (method: string, params: unknown) => Promise<unknown>;

/** Echo turns measured for the round-trip floor. */
const ECHO_TURNS = 2_000;

async function measure(mode: "readline" | "jsonrpc", turns: number): Promise<{ rates: number[]; echoP50: number; echoP99: number }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL("../test/fixtures/agent.ts", import.meta.url))], { stdio: ["pipe", "pipe", "ignore"] });
  let count = 0;
  let call: Call;
  if (mode === "jsonrpc") {
    const connection = createMessageConnection(new NdjsonMessageReader(child.stdout, { maxLineBytes: 1 << 24 }), new NdjsonMessageWriter(child.stdin));
    connection.onNotification(() => void count++);
    connection.listen();
    call = (method, params) => connection.sendRequest(method, params);
  } else {
    const lines = createInterface({ input: child.stdout });
    let waiting: ((result: unknown) => void) | undefined;
    let id = 0;
    lines.on("line", (line) => {
      const message = JSON.parse(line) as { method?: string; result?: unknown };
      if (message.method !== undefined) count++;
      else waiting?.(message.result);
    });
    call = (method, params) =>
      new Promise((resolve) => {
        waiting = resolve;
        child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params })}\n`);
      });
  }
  try {
    await call(Acp.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = (await call(Acp.agent.session.new, { cwd: "/tmp", mcpServers: [] })) as { sessionId: string };
    const rates: number[] = [];
    for (let i = 0; i < turns; i++) {
      count = 0;
      const start = performance.now();
      await call(Acp.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: floodPrompt(UPDATES, BYTES) }] });
      // The response may overtake the last notifications in the connection's queue.
      while (count < UPDATES && performance.now() - start < 30_000) await new Promise((r) => setImmediate(r));
      rates.push(count / ((performance.now() - start) / 1000));
    }
    const echo: number[] = [];
    for (let i = 0; i < ECHO_TURNS; i++) {
      const start = performance.now();
      await call(Acp.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: echoPrompt("x") }] });
      echo.push(performance.now() - start);
    }
    echo.sort((a, b) => a - b);
    return { rates, echoP50: quantileSorted(echo, 0.5), echoP99: quantileSorted(echo, 0.99) };
  } finally {
    child.kill();
  }
}

const turns = Number(process.argv[2] ?? 5);
for (const mode of ["readline", "jsonrpc"] as const) {
  const m = await measure(mode, turns);
  const s = summarize(m.rates);
  process.stdout.write(
    `${mode.padEnd(8)} ${s.median.toFixed(0)} updates/s [${s.min.toFixed(0)}–${s.max.toFixed(0)}] over ${s.runs} turns of ${UPDATES}; ` +
      `echo round trip p50 ${m.echoP50.toFixed(3)} ms, p99 ${m.echoP99.toFixed(3)} ms over ${ECHO_TURNS} turns\n`,
  );
}
