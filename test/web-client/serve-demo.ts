// `acp-remote serve` as a real child process from source, with the embedded
// demo agent (no --agent) and a bearer token, on port 0, in a folder of its
// own (the demo reads README.md from it); ready once it printed
// `acp-remote listening on <url>`.
import { spawnProjectServe, type ProjectServe } from "../helpers/serve-project.ts";

export type DemoServe = ProjectServe;

export function spawnDemoServe(options: { token: string; args?: string[]; env?: Record<string, string> }): Promise<DemoServe> {
  return spawnProjectServe({ ...options, files: { "README.md": "# A demo project\n\nRead by the demo agent through the sidecar.\n" } });
}
