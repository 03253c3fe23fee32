/** One configured agent: a command that speaks ACP (newline-delimited JSON-RPC) on stdio. */
export interface AgentSpec {
  /** Name used in URLs (`/acp?agent=NAME`), as the `/v1` model, and in views. */
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  cwd?: string;
}
