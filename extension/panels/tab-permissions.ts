// The permission requests of one session, as its tab shows them: each
// pending request of the permission center for that session shows inline,
// and goes again (settled) when it is answered anywhere or withdrawn. The
// first answer wins, whether given in the tab, the notification, the
// permissions panel or a remote client.
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
  /** Requests the tab answered (its own answer shows as "answered here"). */
  readonly #answeredHere = new Set<string>();

  constructor(center: PermissionCenter, sessionId: string, sink: TabPermissionSink) {
    this.#center = center;
    this.#sessionId = sessionId;
    this.#sink = sink;
  }

  /** Shows every pending request of the session (after the tab drew the session anew). */
  showPending(): void {
    this.#shown.clear();
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
    const states = new Map(this.#center.entries().map((e) => [e.info.permissionId, e.state]));
    for (const id of [...this.#shown]) {
      const state = states.get(id);
      if (state === "pending") continue;
      this.#shown.delete(id);
      const how: PermissionSettlement = this.#answeredHere.delete(id) ? "answered here" : state === "answered" ? "answered elsewhere" : "withdrawn";
      this.#sink.settled(id, how);
    }
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
