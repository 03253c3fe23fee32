// The permission requests of one session, as its tab shows them: each
// pending request of the permission center for that session shows inline,
// and goes again (settled) when it is answered anywhere or withdrawn, saying
// who answered what: "here" for the tab's own answer, "in the editor" for the
// notification, the permissions panel or the diff editor, a device by its
// name. The first answer wins, whether given in the tab, the notification,
// the permissions panel, the diff editor or a remote client. Who answered may
// be learnt after the request went: the tab is then told anew.
import type { RequestPermissionRequest } from "@agentclientprotocol/sdk";
import type { PermissionCenter, PermissionEntry } from "../permissions/permission-center.ts";
import type { PermissionSettlement } from "../../web/session-view/api.ts";

export interface TabPermissionSink {
  requested(permissionId: string, request: RequestPermissionRequest): void;
  settled(permissionId: string, how: PermissionSettlement): void;
}

export class TabPermissions {
  readonly #center: PermissionCenter;
  readonly #sessionId: string;
  readonly #sink: TabPermissionSink;
  /** Requests showing open in the tab. */
  readonly #shown = new Set<string>();
  /** Requests the tab answered (its own answer shows as answered "here"). */
  readonly #answeredHere = new Set<string>();
  /** Requests the tab showed settled, with what it was told of each (told again only when that changes). */
  readonly #told = new Map<string, string>();

  constructor(center: PermissionCenter, sessionId: string, sink: TabPermissionSink) {
    this.#center = center;
    this.#sessionId = sessionId;
    this.#sink = sink;
  }

  /** Shows every pending request of the session (after the tab drew the session anew). */
  showPending(): void {
    this.#shown.clear();
    this.#told.clear();
    for (const e of this.#center.entries()) if (e.state === "pending") this.asked(e);
  }

  /** A new request arrived at the center. */
  asked(entry: PermissionEntry): void {
    const info = entry.info;
    if (info.sessionId !== this.#sessionId || this.#shown.has(info.permissionId)) return;
    this.#shown.add(info.permissionId);
    this.#sink.requested(info.permissionId, { sessionId: info.sessionId, toolCall: info.toolCall, options: info.options });
  }

  /** The center changed: what the tab shows open and is no longer pending settles. */
  changed(): void {
    const entries = new Map(this.#center.entries().map((e) => [e.info.permissionId, e]));
    // The center keeps a bounded number of settled requests: what it forgot, the tab forgets too.
    for (const id of [...this.#told.keys()]) if (!entries.has(id)) this.#told.delete(id);
    for (const id of [...this.#answeredHere]) if (!entries.has(id)) this.#answeredHere.delete(id);
    for (const id of [...this.#shown, ...this.#told.keys()]) {
      const entry = entries.get(id);
      if (entry?.state === "pending") continue;
      this.#shown.delete(id);
      const how = entry === undefined ? "withdrawn" : this.#settlement(entry);
      const told = JSON.stringify(how);
      if (this.#told.get(id) === told) continue;
      if (entry !== undefined) this.#told.set(id, told);
      this.#sink.settled(id, how);
    }
  }

  /** How the tab tells a settled request: its own answer as "here", the rest of the editor as "editor", others as the sidecar said. */
  #settlement(entry: PermissionEntry): PermissionSettlement {
    const id = entry.info.permissionId;
    const resolution = entry.resolution;
    if (this.#answeredHere.has(id) && resolution?.by === "editor") return { ...resolution, by: "here" };
    if (resolution !== undefined) return resolution;
    return entry.state === "answered" ? { ...(entry.chosenOptionId === undefined ? {} : { optionId: entry.chosenOptionId }), by: "editor" } : "withdrawn";
  }

  /** The person answered in the tab (`null`: stopped the turn). False when another answer came first. */
  answer(permissionId: string, optionId: string | null): boolean {
    this.#answeredHere.add(permissionId);
    const won = optionId === null ? this.#center.decline(permissionId) : this.#center.answer(permissionId, optionId);
    if (!won) this.#answeredHere.delete(permissionId);
    this.changed();
    return won;
  }
}
