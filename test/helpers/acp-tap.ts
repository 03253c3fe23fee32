// Runs an ACP agent on its stdio unchanged and notes, one JSON line per
// message in a file, which methods each side called: what the agent asked of
// its client (`fs/*`, `terminal/*`, `session/request_permission`) is measured
// at the agent's own pipe, whoever serves it. `session/update`s are counted
// apart, not noted one by one.
//   node test/helpers/acp-tap.ts LOG_FILE -- COMMAND [ARGS...]
import { spawn } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const ACP_TAP = fileURLToPath(import.meta.url);

/** One method call seen on the pipe: `agent` called it of its client, or `client` of the agent. */
export interface TappedCall {
  from: "agent" | "client";
  method: string;
}

/** The calls noted in `file` so far. */
export function tappedCalls(file: string): TappedCall[] {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TappedCall);
}

/** The command line that runs `command` through the tap, noting into `file`. */
export function tapped(file: string, command: string, args: readonly string[]): { command: string; args: string[] } {
  return { command: process.execPath, args: [ACP_TAP, file, "--", command, ...args] };
}

function note(file: string, from: TappedCall["from"], line: string): void {
  let method: unknown;
  try {
    method = (JSON.parse(line) as { method?: unknown }).method;
  } catch {
    return;
  }
  if (typeof method === "string" && method !== "session/update") appendFileSync(file, `${JSON.stringify({ from, method })}\n`);
}

if (process.argv[1] === ACP_TAP) {
  const [file, separator, command, ...args] = process.argv.slice(2);
  if (!file || separator !== "--" || !command) {
    process.stderr.write("usage: acp-tap.ts LOG_FILE -- COMMAND [ARGS...]\n");
    process.exit(2);
  }
  // In the tap's own process group (the server ends the whole group), with the tap's environment.
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  createInterface({ input: process.stdin }).on("line", (line) => {
    note(file, "client", line);
    child.stdin.write(`${line}\n`);
  }).on("close", () => child.stdin.end());
  createInterface({ input: child.stdout }).on("line", (line) => {
    note(file, "agent", line);
    process.stdout.write(`${line}\n`);
  });
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => child.kill(signal));
}
