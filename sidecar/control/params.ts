// The params of the control protocol's requests, as zod schemas: what the
// editor may send (docs/control-protocol.md), checked in one place. A request
// whose params do not fit is answered -32602 with what was wrong, field by field.
import { ResponseError } from "vscode-jsonrpc";
import { z } from "zod";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import type { ControlInitOptions, PermissionPolicy } from "../../protocol/control.ts";
import { ControlErrorCode } from "./lsp.ts";

export const PERMISSION_POLICIES = ["editor", "client", "both"] as const satisfies readonly PermissionPolicy[];

const nonEmpty = z.string().min(1, "must be a non-empty string");
const policy = z.enum(PERMISSION_POLICIES, { error: `must be one of ${PERMISSION_POLICIES.join(", ")}` });

const agentSpec = z.object({
  name: nonEmpty,
  command: nonEmpty,
  args: z.array(z.string()),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
}) satisfies z.ZodType<AgentSpec>;

/** `initialize`'s initializationOptions: each field may be left out (the sidecar's own flags apply). */
const initOptions = z
  .object({
    host: z.object({ fs: z.boolean(), terminal: z.boolean() }),
    permissionPolicy: policy,
    tokens: z.array(nonEmpty).min(1, "must be a non-empty array of non-empty strings"),
    serve: z.object({
      host: nonEmpty.optional(),
      port: z.int().min(0).max(65_535).optional(),
      tls: z.boolean().optional(),
      agents: z.array(agentSpec).optional(),
      upstreamUrl: z.string().optional(),
    }),
  })
  .partial() satisfies z.ZodType<Partial<ControlInitOptions>>;

/** A prompt's content blocks: checked to be objects with a `type`; the agent checks the rest. */
const contentBlock = z.looseObject({ type: nonEmpty });

export const ControlParams = {
  pairDevice: z.object({ label: z.string().max(200, "must be at most 200 characters") }),
  revokeDevice: z.object({ deviceId: nonEmpty }),
  newSession: z.object({ agent: nonEmpty.optional(), cwd: nonEmpty }),
  prompt: z.object({ sessionId: nonEmpty, prompt: z.array(contentBlock).min(1, "must hold at least one content block") }),
  setMode: z.object({ sessionId: nonEmpty, modeId: nonEmpty }),
  setConfigOption: z.object({ sessionId: nonEmpty, configId: nonEmpty, value: z.union([z.string(), z.boolean()]) }),
  initialize: z.object({ initializationOptions: initOptions.nullish() }).loose(),
  session: z.object({ sessionId: nonEmpty }),
  setTokens: z.object({ tokens: z.array(nonEmpty).min(1, "must be a non-empty array of non-empty strings") }),
  setPermissionPolicy: z.object({ policy }),
  setUpstreamKey: z.object({ key: nonEmpty.nullable() }),
  addPublicUrl: z.object({ url: nonEmpty }),
} as const;

/** The params as the schema reads them; a -32602 ResponseError naming each misfit field otherwise. */
export function parseParams<T>(schema: z.ZodType<T>, params: unknown): T {
  const result = schema.safeParse(params ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")} ${issue.message}` : issue.message));
  throw new ResponseError(ControlErrorCode.InvalidParams, problems.join("; "));
}
