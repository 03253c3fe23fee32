// The environment variables `acp-remote serve` reads, in one place: the
// composition (serve.ts) reads them and hands plain values to the parts, so
// no route or backend looks at process.env itself. None of them reaches an
// agent or a terminal (common/child-environment.ts). The demo agent's own
// (DEMO_DELAY_ENV) is with the demo, sidecar/agents/demo/demo-host.ts, which
// both sides import.
import type { OneShotPermissionPolicy } from "../hub/types.ts";

/** The access token of the server's person, for a person who sets it by hand (`serve` takes it out of its environment once read). */
export const TOKEN_ENV = "ACP_REMOTE_TOKEN";

/** The upstream provider's API key (the editor may set it through the control protocol instead). */
const UPSTREAM_KEY_ENV = "ACP_REMOTE_UPSTREAM_KEY";
/** Who answers an agent's permission request during a /v1 completion: editor, allow or reject. */
export const V1_PERMISSIONS_ENV = "ACP_REMOTE_V1_PERMISSIONS";
/** The ntfy topic (`--notify ntfy:URL/TOPIC`) when no flag gives one. */
export const NOTIFY_ENV = "ACP_REMOTE_NOTIFY";
/** The access token of the ntfy server (`Authorization: Bearer`), if it wants one. */
export const NTFY_TOKEN_ENV = "ACP_REMOTE_NTFY_TOKEN";
/** The public URLs (`--public-url`) when no flag gives one: one, or several separated by spaces. */
export const PUBLIC_URL_ENV = "ACP_REMOTE_PUBLIC_URL";

const PERMISSION_POLICIES: readonly OneShotPermissionPolicy[] = ["editor", "allow", "reject"];

/** The /v1 permission policy, or undefined (the hub's default). A wrong value stops the start with a clear error. */
export function v1PermissionsFromEnv(env: NodeJS.ProcessEnv = process.env): OneShotPermissionPolicy | undefined {
  const value = env[V1_PERMISSIONS_ENV];
  if (value === undefined || value === "") return undefined;
  if (!(PERMISSION_POLICIES as readonly string[]).includes(value)) {
    throw new Error(`${V1_PERMISSIONS_ENV} must be one of ${PERMISSION_POLICIES.join(", ")}, not "${value}"`);
  }
  return value as OneShotPermissionPolicy;
}

/** The upstream provider's key from the environment, or undefined. */
export function upstreamKeyFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[UPSTREAM_KEY_ENV];
  return value === undefined || value === "" ? undefined : value;
}

/** The public URLs of the environment (a URL has no unencoded space, so spaces separate them). */
export function publicUrlsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env[PUBLIC_URL_ENV] ?? "").split(/\s+/).filter((url) => url !== "");
}
