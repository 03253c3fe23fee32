// Refreshes the snapshot of the ACP Registry shipped with acp-remote
// (common/agent-registry-snapshot.json), which `serve --agent ID` and
// `acp-remote agents` use when the registry cannot be reached. Run before a
// release (`npm run registry:refresh`), never by the build: the build works
// offline. Only agents that pass the same checks as at run time are kept.
//
//   node scripts/refresh-agent-registry.mjs [--url URL] [--out FILE]
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ACP_REGISTRY_URL, AGENT_REGISTRY_SNAPSHOT_FORMAT } from "../protocol/agent-registry.ts";
import { parseAgentRegistry } from "../common/agent-registry.ts";
import { DEFAULT_REGISTRY_FETCH_TIMEOUT_MS, DEFAULT_REGISTRY_MAX_BYTES } from "../sidecar/limits.ts";

const { values } = parseArgs({
  options: {
    url: { type: "string", default: ACP_REGISTRY_URL },
    out: { type: "string", default: new URL("../common/agent-registry-snapshot.json", import.meta.url).pathname },
  },
});
// The bounds the sidecar gives the same request.
const response = await fetch(values.url, { signal: AbortSignal.timeout(DEFAULT_REGISTRY_FETCH_TIMEOUT_MS), headers: { accept: "application/json" } }).catch((error) => {
  process.stderr.write(`cannot reach ${values.url}: ${error.cause?.code ?? error.message}; the snapshot is unchanged\n`);
  process.exit(1);
});
const text = response.ok ? await response.text() : "";
if (!response.ok || text.length > DEFAULT_REGISTRY_MAX_BYTES) {
  process.stderr.write(`${values.url} answered HTTP ${response.status}${response.ok ? `, more than ${DEFAULT_REGISTRY_MAX_BYTES} bytes` : ""}; the snapshot is unchanged\n`);
  process.exit(1);
}
const { registry, problems } = parseAgentRegistry(JSON.parse(text));
if (registry.agents.length === 0) {
  process.stderr.write(`${values.url} lists no usable agent; the snapshot is unchanged\n`);
  process.exit(1);
}
const snapshot = { format: AGENT_REGISTRY_SNAPSHOT_FORMAT, formatVersion: 1, url: values.url, fetchedAt: new Date().toISOString(), registry };
writeFileSync(values.out, JSON.stringify(snapshot, null, 2) + "\n");
for (const problem of problems) process.stderr.write(`skipped: ${problem}\n`);
process.stdout.write(`${values.out}: ${registry.agents.map((a) => `${a.id} ${a.version}`).join(", ")}\n`);
