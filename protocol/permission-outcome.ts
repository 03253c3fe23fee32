// How a permission request was settled, told the same way wherever it shows:
// the session view (the editor's tab and the phone), the editor's permissions
// panel, a replay. The server says who settled it (a client, the editor, a
// notification, or nobody: the agent gave up, the wait ran out, the turn was
// stopped) and, when a paired device answered, the device's name: in the
// replay's mark, in the `permission_resolved` notice's `_meta.acpRemote`, and
// in the control protocol's `acpRemote/permission/settled`.
//
// Types only from the SDK, so the browser bundles can use this file.
import type { PermissionOption } from "@agentclientprotocol/sdk";
import type { AcpExt } from "./acp.ts";
import type { PermissionMark, PermissionSettledBy } from "./history.ts";

/** The `_meta` key of the server's own fields (protocol/acp.ts spells it too; the type keeps both the same). */
const META_KEY: (typeof AcpExt)["metaKey"] = "acpRemote";

/**
 * Who settled a permission request, as the one who shows it sees it: `here`
 * is the view that shows the card (its own button, or its Stop); the others
 * are the server's PermissionSettledBy.
 */
export type PermissionSettler = "here" | PermissionSettledBy;

/** A settled permission request: the option chosen (none when it was cancelled or withdrawn), who settled it, and the device. */
export interface PermissionResolution {
  /** The option chosen; absent when none was (cancelled, withdrawn). */
  optionId?: string;
  /** Who settled it; absent when the one who shows it was not told (it only saw the request go). */
  by?: PermissionSettler;
  /** The paired device that answered, by the name it was given, when a device did (`by: "client"`). */
  device?: string;
}

/**
 * What the server adds under `_meta.acpRemote` of the `permission_resolved`
 * notice (the multi-client attach proposal's): who settled the request, and
 * the paired device's name when a device answered.
 */
export interface PermissionResolvedMeta {
  settledBy: PermissionSettledBy;
  device?: string;
}

/** The resolution a `permission_resolved` notice tells (its outcome, and our `_meta` when the server sent it). */
export function resolutionOfNotice(update: { outcome?: unknown; _meta?: unknown }): PermissionResolution {
  const outcome = update.outcome as { outcome?: unknown; optionId?: unknown } | undefined;
  const meta = (update._meta as Record<string, unknown> | null | undefined)?.[META_KEY] as Partial<Record<keyof PermissionResolvedMeta, unknown>> | undefined;
  return {
    ...(outcome?.outcome === "selected" && typeof outcome.optionId === "string" ? { optionId: outcome.optionId } : {}),
    ...(typeof meta?.settledBy === "string" ? { by: meta.settledBy as PermissionSettledBy } : {}),
    ...(typeof meta?.device === "string" ? { device: meta.device } : {}),
  };
}

/** The resolution a replayed history's mark tells. */
export function resolutionOfMark(mark: PermissionMark): PermissionResolution {
  return {
    ...(mark.outcome.outcome === "selected" ? { optionId: mark.outcome.optionId } : {}),
    by: mark.settledBy,
    ...(mark.device === undefined ? {} : { device: mark.device }),
  };
}

/** What came of it, for styling: an option of an allow kind or of a reject kind was chosen, or none was. */
export type PermissionVerdict = "allowed" | "rejected" | "withdrawn";

export function verdictOf(resolution: PermissionResolution, options: readonly PermissionOption[]): PermissionVerdict {
  const option = options.find((o) => o.optionId === resolution.optionId);
  if (option === undefined) return "withdrawn";
  return option.kind.startsWith("reject") ? "rejected" : "allowed";
}

/** Where an answer was given, as words after the verb ("Allowed on Pixel 8"); empty when nobody answered. */
function where(resolution: PermissionResolution): string {
  switch (resolution.by) {
    case "here":
      return "here";
    case "editor":
      return "in the editor";
    case "client":
      return resolution.device ? `on ${resolution.device}` : "on a remote client";
    case "notification":
      return "from a notification";
    default:
      return "";
  }
}

/**
 * The outcome in words: who answered what ("Allowed on Pixel 8 — Allow
 * once", "Rejected here", "Allowed in the editor — Always allow"), or why
 * nobody did ("Withdrawn: the turn was stopped"). Never a bare "Answered".
 */
export function resolutionLabel(resolution: PermissionResolution, options: readonly PermissionOption[]): string {
  const option = options.find((o) => o.optionId === resolution.optionId);
  const place = where(resolution);
  if (option !== undefined) {
    const verb = option.kind.startsWith("reject") ? "Rejected" : "Allowed";
    const head = place === "" ? verb : `${verb} ${place}`;
    // The option's own name says what was allowed (once, always, which commands), unless it is the verb alone.
    return /^(allow|reject|deny|yes|no)$/i.test(option.name.trim()) ? head : `${head} — ${option.name}`;
  }
  switch (resolution.by) {
    case "agent":
      return "Withdrawn by the agent";
    case "timeout":
      return "Withdrawn: nobody answered in time";
    case "interrupted":
      return "Withdrawn: the turn was interrupted";
    case "cancel":
    case "here":
    case "editor":
    case "client":
    case "notification":
      // A client that stops its turn answers its open requests as cancelled. Where it was stopped is left out:
      // a page that stopped it sees "here" live but the server's "client" after a reload, and both must read the same.
      return "Withdrawn: the turn was stopped";
    default:
      // The one who shows it only saw the request go.
      return "Withdrawn";
  }
}
