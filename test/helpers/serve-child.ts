// `acp-remote serve` as a real child process (`node sidecar/cli/main.ts serve`),
// on port 0, with the fixture agent and a bearer token; ready once it printed
// its first stdout line, `acp-remote listening on <url>`.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI, NODE } from "./connect-child.ts";
import { terminateChild } from "./terminate-child.ts";

export const FIXTURE_AGENT = new URL("../fixtures/agent.ts", import.meta.url).pathname;

export interface ServeChild {
  /** Base URL as the server printed it. */
  url: string;
  port: number;
  dataDir: string;
  child: ChildProcessWithoutNullStreams;
  stderr: () => string;
  close(): Promise<void>;
}

export async function spawnServe(options: { token: string; tls?: boolean; env?: Record<string, string>; moreAgents?: string[] }): Promise<ServeChild> {
  const dataDir = mkdtempSync(join(tmpdir(), "acp-remote-serve-"));
  const args = [CLI, "serve", "--port", "0", "--data-dir", dataDir, "--token", options.token, "--agent", `fixture=${NODE} ${FIXTURE_AGENT}`];
  for (const agent of options.moreAgents ?? []) args.push("--agent", agent);
  if (options.tls === true) args.push("--tls");
  const child = spawn(NODE, args, { env: { ...process.env, ...options.env }, stdio: ["pipe", "pipe", "pipe"] });
  let err = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    err += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const listening = new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.setEncoding("utf8");
    const onData = (chunk: string): void => {
      out += chunk;
      const nl = out.indexOf("\n");
      if (nl === -1) return;
      child.stdout.off("data", onData);
      const match = /^acp-remote listening on (\S+)$/.exec(out.slice(0, nl));
      if (match?.[1] === undefined) reject(new Error(`unexpected first line: ${out.slice(0, nl)}`));
      else resolve(match[1]);
    };
    child.stdout.on("data", onData);
    void exited.then(() => reject(new Error(`serve exited before listening:\n${err}`)));
  });
  let url: string;
  try {
    url = await listening;
  } catch (error) {
    // It never listened: nothing will call close(), so end it and its data folder here.
    child.kill("SIGKILL");
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    url,
    port: Number(new URL(url).port),
    dataDir,
    child,
    stderr: () => err,
    async close() {
      await terminateChild(child, exited);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
