// ACP Remote: Add Agent… A quick pick over the agents of the ACP Registry
// (name, description, version, what it runs and how it signs in); the one
// picked is appended to `acpRemote.agents` as the command that runs the
// version the registry pins (`npx -y pkg@version …`). The list is refreshed
// from the registry when the network allows and cached in the extension's
// storage; otherwise the cache, then the list shipped with the extension, is
// shown, with its age in the title.
import { join } from "node:path";
import * as vscode from "vscode";
import type { RegistryAgent } from "../protocol/agent-registry.ts";
import { describeAge, registryAgentSpec, registryCommandLine } from "../common/agent-registry.ts";
import { AGENT_REGISTRY_CACHE_FILE, loadAgentRegistry, type LoadedAgentRegistry } from "../common/agent-registry-source.ts";
import { SECTION } from "./config.ts";
import type { Ctx } from "./ctx.ts";
import { DEFAULT_REGISTRY_FETCH_TIMEOUT_MS, DEFAULT_REGISTRY_MAX_BYTES, DEFAULT_REGISTRY_REFRESH_AFTER_MS } from "./limits.ts";

interface AgentItem extends vscode.QuickPickItem {
  agent: RegistryAgent;
}

function sourceText(loaded: LoadedAgentRegistry): string {
  if (loaded.source === "registry") return "fetched just now";
  const when = `${loaded.fetchedAt.slice(0, 10)}, ${describeAge(loaded.fetchedAt)}`;
  return loaded.source === "cache" ? `cached list of ${when}` : `list shipped with the extension, ${when}`;
}

function item(agent: RegistryAgent): AgentItem {
  const auth = agent.authMethods && agent.authMethods.length > 0 ? ` · sign-in: ${agent.authMethods.map((m) => m.name).join(", ")}` : "";
  return {
    label: agent.name,
    description: `${agent.id} · ${agent.version}`,
    detail: `${agent.description} — ${registryCommandLine(agent)}${auth}`,
    agent,
  };
}

/** A name for the agent that `acpRemote.agents` does not use yet: its id, else id-2, id-3… */
function freeName(id: string, taken: ReadonlySet<string>): string {
  if (!taken.has(id)) return id;
  for (let n = 2; ; n++) if (!taken.has(`${id}-${n}`)) return `${id}-${n}`;
}

/** Runs the command; resolves with the name the agent was added under (undefined when the person backed out). */
export async function addAgent(ctx: Ctx): Promise<string | undefined> {
  const loading = loadAgentRegistry({
    cacheFile: join(ctx.extension.globalStorageUri.fsPath, AGENT_REGISTRY_CACHE_FILE),
    url: process.env["ACP_REMOTE_REGISTRY_URL"],
    timeoutMs: DEFAULT_REGISTRY_FETCH_TIMEOUT_MS,
    maxBytes: DEFAULT_REGISTRY_MAX_BYTES,
    refreshAfterMs: DEFAULT_REGISTRY_REFRESH_AFTER_MS,
  });
  const loaded = await vscode.window.withProgress({ location: vscode.ProgressLocation.Window, title: "ACP Remote: reading the ACP Registry" }, () => loading);
  if (loaded.refreshError !== undefined) ctx.log.info(`ACP Registry not refreshed (${loaded.refreshError}); showing the ${sourceText(loaded)}`);
  const pick = await vscode.window.showQuickPick(loaded.registry.agents.map(item), {
    title: `ACP Remote: Add Agent from the ACP Registry (${sourceText(loaded)})`,
    placeHolder: "An agent to run; it is added to acpRemote.agents at the version the registry pins",
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (pick === undefined) return undefined;
  const cfg = vscode.workspace.getConfiguration(SECTION);
  const inspected = cfg.inspect<unknown[]>("agents");
  // Where the list is set already: the workspace's when it has one, else the user's.
  const target = inspected?.workspaceValue !== undefined ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  const current = (target === vscode.ConfigurationTarget.Workspace ? inspected?.workspaceValue : inspected?.globalValue) ?? [];
  const list = Array.isArray(current) ? current : [];
  const taken = new Set(list.map((a) => (typeof a === "object" && a !== null ? String((a as { name?: unknown }).name) : "")));
  const name = freeName(pick.agent.id, taken);
  // Throws for an archive to download: the command table shows its message.
  const spec = registryAgentSpec(pick.agent, name);
  const entry: Record<string, unknown> = { name: spec.name, command: spec.command, args: spec.args };
  if (spec.env !== undefined) entry["env"] = spec.env;
  await cfg.update("agents", [...list, entry], target);
  ctx.log.info(`Added agent ${name}: ${pick.agent.name} ${pick.agent.version} (${[spec.command, ...spec.args].join(" ")})`);
  const signIn = pick.agent.authMethods && pick.agent.authMethods.length > 0 ? ` It signs in with: ${pick.agent.authMethods.map((m) => m.name).join(", ")}.` : "";
  void vscode.window.showInformationMessage(`ACP Remote: added ${pick.agent.name} ${pick.agent.version} as "${name}" (${spec.command} ${spec.args.join(" ")}).${signIn}`);
  return name;
}
