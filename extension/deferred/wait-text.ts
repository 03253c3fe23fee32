// What a pending job waits on, in words: the progress notification's message
// and the view's state of a pending job. It imports nothing from VS Code, so
// it runs (and is tested) in plain Node.
import type { DeferredJobState } from "../../protocol/control.ts";
import { Command } from "../command-ids.ts";

/** What the editor knows of a pending job now. */
export interface JobWait {
  model: string;
  /** The sidecar's last word on it; undefined before any. */
  state: DeferredJobState | undefined;
  /** The permission request its run waits on: who asks and for what. */
  permission?: { agent: string; title: string };
  /** The server is not running: nothing happens to the job until it is back. */
  serverDown?: boolean;
}

/** The progress notification's message (Markdown: the link opens the permission requests). */
export function waitMessage(wait: JobWait): string {
  if (wait.serverDown) return "The server is not running: the job waits for it to start again.";
  if (wait.permission) {
    return `Waiting for your permission: ${wait.permission.agent} asks to run "${wait.permission.title}". [Answer](command:${Command.showPermissions})`;
  }
  switch (wait.state) {
    case "running":
      return `Running: ${wait.model} is working on it.`;
    case "done":
    case "failed":
      return "Finished: fetching the result.";
    default:
      // Submitted, not started yet: every slot of the model is taken.
      return `Queued: waiting for a free slot on ${wait.model}.`;
  }
}

/** The view's word for a pending job. */
export function waitLabel(wait: JobWait): string {
  if (wait.serverDown) return "pending";
  if (wait.permission) return "waiting for your permission";
  if (wait.state === "running") return "running";
  if (wait.state === "pending") return "queued";
  return "pending";
}
