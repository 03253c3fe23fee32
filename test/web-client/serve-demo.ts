// `acp-remote serve` as a real child process from source, with the embedded
// demo agent (no --agent) and a bearer token, on port 0, in a folder of its
// own (the demo reads README.md from it); ready once it printed
// `acp-remote listening on <url>`.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI, NODE } from "../helpers/connect-child.ts";

export interface DemoServe {
  url: string;
  port: number;
  /** The server's working folder: the default folder of new sessions. */
  cwd: string;
  stderr(): string;
  close(): Promise<void>;
}

export async function spawnDemoServe(options: { token: string; args?: string[]; env?: Record<string, string> }): Promise<DemoServe> {
  const root = mkdtempSync(join(tmpdir(), "acp-remote-web-serve-"));
  const cwd = join(root, "project");
  const dataDir = join(root, "data");
  mkdirSync(cwd);
  writeFileSync(join(cwd, "README.md"), "# A demo project\n\nRead by the demo agent through the sidecar.\n");
  const child: ChildProcessWithoutNullStreams = spawn(
    NODE,
    [CLI, "serve", "--port", "0", "--data-dir", dataDir, "--token", options.token, ...(options.args ?? [])],
    { cwd, env: { ...process.env, ACP_REMOTE_TOKEN: "", ...options.env }, stdio: ["pipe", "pipe", "pipe"] },
  );
  let err = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(root, { recursive: true, force: true });
  };
  let url: string;
  try {
    url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (chunk: string) => {
        out += chunk;
        const match = /^acp-remote listening on (\S+)\n/.exec(out);
        if (match?.[1]) resolve(match[1]);
      });
      void exited.then(() => reject(new Error(`serve exited before listening:\n${err}`)));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, port: Number(new URL(url).port), cwd, stderr: () => err, close: stop };
}
