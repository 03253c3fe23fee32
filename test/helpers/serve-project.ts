// `acp-remote serve` as a real child process on port 0 with a bearer token,
// started in a project folder of its own (the default folder of new sessions,
// where an agent reads its files) with its data folder beside it; ready once
// it printed `acp-remote listening on <url>`. Closing it ends the child and
// removes both folders.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI, NODE } from "./connect-child.ts";
import { terminateChild } from "./terminate-child.ts";

export interface ProjectServeOptions {
  token: string;
  /** More `serve` arguments (agents, flags). */
  args?: string[];
  env?: Record<string, string>;
  /** The server's entry point; another checkout's to run its code. */
  cli?: string;
  /** Files written into the project folder before the server starts, by name. */
  files?: Record<string, string>;
}

export interface ProjectServe {
  url: string;
  port: number;
  /** The server's working folder: the default folder of new sessions. */
  cwd: string;
  dataDir: string;
  stderr(): string;
  close(): Promise<void>;
}

export async function spawnProjectServe(options: ProjectServeOptions): Promise<ProjectServe> {
  const root = mkdtempSync(join(tmpdir(), "acp-remote-serve-project-"));
  const cwd = join(root, "project");
  const dataDir = join(root, "data");
  mkdirSync(cwd);
  for (const [name, text] of Object.entries(options.files ?? {})) writeFileSync(join(cwd, name), text);
  const child: ChildProcessWithoutNullStreams = spawn(
    NODE,
    [options.cli ?? CLI, "serve", "--port", "0", "--data-dir", dataDir, "--token", options.token, ...(options.args ?? [])],
    { cwd, env: { ...process.env, ACP_REMOTE_TOKEN: "", ...options.env }, stdio: ["pipe", "pipe", "pipe"] },
  );
  let err = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => (err += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const close = async (): Promise<void> => {
    await terminateChild(child, exited);
    rmSync(root, { recursive: true, force: true });
  };
  let url: string;
  try {
    url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (chunk: string) => {
        out += chunk;
        const match = /^acp-remote listening on (\S+)\n/m.exec(out);
        if (match?.[1]) resolve(match[1]);
      });
      void exited.then(() => reject(new Error(`serve exited before listening:\n${err}`)));
    });
  } catch (error) {
    await close();
    throw error;
  }
  return { url, port: Number(new URL(url).port), cwd, dataDir, stderr: () => err, close };
}
