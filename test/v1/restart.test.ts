// Results survive a sidecar that dies (design: Deferred completions, decision
// 3): the CLI is killed with SIGKILL while jobs run, wait, and have results
// waiting; a new sidecar on the same data folder answers every request_id
// exactly once.
import { describe, it, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { DatabaseSync } from "node:sqlite";
import OpenAI, { NotFoundError } from "openai";
import { FIXTURE_AGENT, NODE, pollDeferred } from "./harness.ts";
import { STORE_FILE } from "../../sidecar/store/store.ts";

const TOKEN = "restart-test-token-0123456789";

interface Cli {
  url: string;
  process: ChildProcess;
  client: OpenAI;
  exited: Promise<void>;
}

/** `acp-remote serve` from source, on a free port; resolves with its URL once it prints it. */
async function startCli(dataDir: string): Promise<Cli> {
  const child = spawn(
    NODE,
    ["sidecar/cli/main.ts", "serve", "--data-dir", dataDir, "--port", "0", "--token", TOKEN, "--agent", `fixture=${NODE} ${FIXTURE_AGENT}`],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", (line) => {
      const match = /^acp-remote listening on (\S+)$/.exec(line);
      if (match?.[1]) resolve(match[1]);
      else reject(new Error(`unexpected first line ${JSON.stringify(line)}; stderr: ${stderr}`));
    });
    child.once("exit", (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  return { url, process: child, exited, client: new OpenAI({ apiKey: TOKEN, baseURL: `${url}/v1`, maxRetries: 0 }) };
}

/** Waits until the store shows every job of `ids` in one of `states` (read from a second connection). */
async function storeShows(dataDir: string, ids: string[], states: string[]): Promise<void> {
  const db = new DatabaseSync(join(dataDir, STORE_FILE), { readOnly: true });
  try {
    for (;;) {
      const rows = db.prepare("SELECT id, state FROM v1_jobs").all() as Array<{ id: string; state: string }>;
      if (ids.every((id) => rows.some((r) => r.id === id && states.includes(r.state)))) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    db.close();
  }
}

async function submit(client: OpenAI, content: string): Promise<string> {
  const body = (await client.post("/chat/completions", {
    body: { model: "fixture", messages: [{ role: "user", content }], deferred: true },
  })) as { request_id: string };
  return body.request_id;
}

describe("a sidecar killed with SIGKILL, restarted on the same data folder", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "acp-remote-restart-"));
  const started: Cli[] = [];
  after(async () => {
    for (const cli of started) {
      if (cli.process.exitCode === null && cli.process.signalCode === null) cli.process.kill("SIGTERM");
      await cli.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("answers every request_id exactly once: results that waited, jobs that ran, jobs that had not started", async () => {
    const first = await startCli(dataDir);
    started.push(first);
    const ready = [await submit(first.client, "echo ready 1"), await submit(first.client, "think kept\necho ready 2")];
    await storeShows(dataDir, ready, ["done"]);
    // Two slots per backend: these two run when the sidecar dies, the other two still wait.
    const running = [await submit(first.client, "slow 1000\necho ran again 1"), await submit(first.client, "slow 1000\necho ran again 2")];
    const waiting = [await submit(first.client, "echo waited 1"), await submit(first.client, "echo waited 2")];
    await storeShows(dataDir, running, ["running"]);
    await storeShows(dataDir, waiting, ["pending"]);

    first.process.kill("SIGKILL");
    await first.exited;

    const second = await startCli(dataDir);
    started.push(second);
    const expected = new Map<string, string>([
      [ready[0]!, "ready 1"],
      [ready[1]!, "ready 2"],
      [running[0]!, "ran again 1"],
      [running[1]!, "ran again 2"],
      [waiting[0]!, "waited 1"],
      [waiting[1]!, "waited 2"],
    ]);
    for (const [id, content] of expected) {
      const got = await pollDeferred(second.client, id);
      assert.equal(got.status, 200, `request ${id}`);
      const body = got.body as OpenAI.Chat.ChatCompletion & { choices: Array<{ message: { reasoning_content?: string } }> };
      assert.equal(body.id, id);
      assert.equal(body.choices[0]?.message.content, content);
      if (id === ready[1]) assert.equal(body.choices[0]?.message.reasoning_content, "kept");
      await assert.rejects(second.client.get(`/chat/deferred-completion/${id}`), NotFoundError);
    }
  });
});
