// Which process ran an agent's turn: the fixture agent answers a `pid` line
// with its process id, and an agent's parent is the sidecar that started it.
import { readFileSync } from "node:fs";
import { texts, type SdkClient } from "../cluster/sdk-client.ts";

/** The parent of a process, read from /proc. */
export function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // "pid (comm) state ppid ...": comm may hold spaces, so read after its closing parenthesis.
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

/** The process ids the fixture agent told this client, in order. */
export function agentPids(client: SdkClient): number[] {
  return texts(client.updates, "agent_message_chunk")
    .filter((t) => t.startsWith("pid: "))
    .map((t) => Number(t.slice("pid: ".length)));
}
