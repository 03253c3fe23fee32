// The configured agents, from the page's own endpoint (sidecar/web/). Also the
// page's check of its token: a refused token is a plain 401 here, where a
// WebSocket would only say that it failed.
import { WEB_AGENTS_PATH, type WebAgentsResponse } from "../../protocol/web-client.ts";
import { authHeaders, type Endpoint, underBase } from "./endpoint.ts";
import { UnauthorizedError } from "./transport.ts";

export type AgentList = WebAgentsResponse["agents"];

export async function fetchAgents(endpoint: Pick<Endpoint, "base" | "token">): Promise<AgentList> {
  const response = await fetch(underBase(endpoint.base, WEB_AGENTS_PATH), { headers: authHeaders({ ...endpoint }), cache: "no-store" });
  if (response.status === 401) throw new UnauthorizedError();
  if (!response.ok) throw new Error(`the server answered ${response.status}`);
  const body = (await response.json()) as WebAgentsResponse;
  return body.agents;
}
