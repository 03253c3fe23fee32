// What the web client served at `/` asks of the sidecar beyond ACP: its one
// JSON endpoint, shared by the route (sidecar/web/) and the page (web/client/).

/** `GET` with `Authorization: Bearer`: the configured agents, the default first, with the folder a new session starts in unless told otherwise. */
export const WEB_AGENTS_PATH = "/app/agents";

export interface WebAgentsResponse {
  agents: Array<{ name: string; isDefault: boolean; cwd: string }>;
}
