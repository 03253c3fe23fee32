// Where the server that runs the demo agent was started: by an editor (`serve
// --control stdio`) or from a terminal. The demo's advice on configuring a
// real agent names what the person has at hand there: the editor's setting and
// command, or the `serve` flag. A flag rather than a variable: the agents'
// environment is kept free of the server's (common/child-environment.ts).

export type DemoHost = "editor" | "terminal";

/** The embedded demo agent's pause between streamed words, in milliseconds; `serve` hands it to the demo agent by name. */
export const DEMO_DELAY_ENV = "ACP_REMOTE_DEMO_DELAY_MS";

/** The flag `serve` starts the demo agent with when an editor hosts the server. */
export const DEMO_EDITOR_FLAG = "--editor";

/** The host the demo agent's arguments name. */
export function demoHostOf(args: readonly string[]): DemoHost {
  return args.includes(DEMO_EDITOR_FLAG) ? "editor" : "terminal";
}
