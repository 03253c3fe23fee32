// createSessionView: composes the parts of the view (header with selectors
// and connection state, transcript, plan, composer) and routes each
// session/update to the part that draws it. Unknown update kinds are ignored,
// so a newer agent does not break an older view. The marks of a replayed
// history (a turn's end, a settled permission request: protocol/history.ts)
// draw what the live turn drew from the prompt's answer and the request.
// The transcript follows the turn while the reader is at its end (follow.ts).
import type { RequestPermissionRequest, SessionConfigOption, SessionModeState, SessionNotification, StopReason } from "@agentclientprotocol/sdk";
import { type HistoryMark, readMark } from "../../protocol/history.ts";
import type { ConnectionState, PermissionRequestId, PermissionSettlement, ProposedDiff, SessionView, SessionViewHost, Unavailable } from "./api.ts";
import { Composer } from "./composer.ts";
import { el } from "./dom.ts";
import { EarlierTurns } from "./earlier.ts";
import type { CardActions } from "./editor-links.ts";
import { Follower } from "./follow.ts";
import { PermissionCard } from "./permissions.ts";
import { PlanPanel, type TurnOutcome } from "./plan.ts";
import { FrameScheduler } from "./scheduler.ts";
import { Selectors } from "./selectors.ts";
import { Transcript } from "./transcript.ts";

/** The heading of a session no one has named yet. */
const DEFAULT_TITLE = "Session";

const CONNECTION_LABELS: Record<ConnectionState, string> = {
  connecting: "Connecting…",
  connected: "",
  reconnecting: "Connection lost, reconnecting…",
  disconnected: "Disconnected",
};

export function createSessionView(root: HTMLElement, host: SessionViewHost): SessionView {
  let busy = false;
  // Each frame that drew something new keeps the reader at the end, or tells them it came.
  const scheduler = new FrameScheduler(() => follower.added());
  // What a card may ask of the host (the editor opens files and diffs; the phone neither).
  const actions: CardActions = {
    ...(host.openFile ? { openFile: (path: string, line?: number) => host.openFile?.(path, line) } : {}),
    ...(host.openDiff ? { openDiff: (diff: ProposedDiff, requestId?: PermissionRequestId) => host.openDiff?.(diff, requestId) } : {}),
  };
  const transcript = new Transcript(scheduler, actions);
  const follower = new Follower(transcript.element, () => {
    // Where the person was taken, the focus goes too: to the request that waits, else to the transcript.
    const card = openCard();
    if (card) card.reveal();
    else follower.element.focus({ preventScroll: true });
  });
  // Above the transcript, in its scroller: the turns before those a paged replay brought.
  const earlier = new EarlierTurns(follower.element, () => host.loadEarlier?.() ?? Promise.resolve({ notifications: [], more: false }), actions);
  follower.element.prepend(earlier.element);
  const plan = new PlanPanel();
  const selectors = new Selectors(host);
  const permissions = new Map<PermissionRequestId, PermissionCard>();
  // Focusable (not in the tab order): a host moves the focus here when the session comes on screen.
  const title = el("h1", { class: "sv-title", tabindex: -1 }, DEFAULT_TITLE);
  /** The first title the session was given: the server's, from its first prompt, shown again when the agent clears its own. */
  let firstTitle: string | undefined;
  /** The heading while no title is given: the name the host knows the session by. */
  let fallbackTitle = DEFAULT_TITLE;
  /** Whether the heading shows a title (the agent's or the first prompt's) rather than that name. */
  let titled = false;
  const connection = el("div", { class: "sv-connection", role: "status", hidden: true });
  const status = el("div", { class: "sv-turn-status", role: "status" });
  const composer = new Composer({
    send: (text) => {
      // Who sends a prompt wants to see it and what answers it: the view goes to the end and follows.
      follower.toBottom();
      host.prompt(text);
    },
    cancel: () => cancelTurn(),
    draftChanged: (text) => host.draftChanged?.(text),
  });

  const view = el(
    "div",
    { class: "sv-root" },
    el("header", { class: "sv-header" }, title, selectors.element),
    connection,
    el("div", { class: "sv-stage" }, follower.element, follower.jump),
    el("div", { class: "sv-footer" }, plan.element, status, composer.element),
  );
  root.append(view);

  function openCard(): PermissionCard | undefined {
    return [...permissions.values()].find((c) => c.open);
  }

  // Cancelling a turn answers its open permission requests as cancelled, as ACP asks of clients.
  function cancelTurn(): void {
    if (!busy) return;
    for (const card of permissions.values()) card.cancel();
    showStatus();
    host.cancel();
  }

  function setBusy(next: boolean): void {
    busy = next;
    composer.setBusy(next);
    view.classList.toggle("sv-busy", next);
    showStatus();
  }

  /** What the turn is doing, under the transcript: a request that waits for the person is no "working". */
  function showStatus(): void {
    const waiting = openCard() !== undefined;
    status.textContent = waiting ? "The agent waits for your answer." : busy ? "The agent is working… (Esc to stop)" : "";
    status.dataset["waiting"] = String(waiting);
  }

  function endTurn(stopReason: StopReason): void {
    scheduler.flush();
    transcript.endStream();
    transcript.turnEnded(stopReason);
    plan.turnEnded(stopReason);
    setBusy(false);
    scheduler.touch();
  }

  /** A turn that failed: its error in the transcript, and the plan where the turn left it. */
  function failTurn(message: string): void {
    scheduler.flush();
    transcript.endStream();
    showError(message);
    plan.turnEnded("error" satisfies TurnOutcome);
    setBusy(false);
  }

  function showError(message: string): void {
    transcript.error(message);
    scheduler.touch();
  }

  function showMark(sessionId: string, mark: HistoryMark): void {
    if ("turnEnd" in mark) {
      const end = mark.turnEnd;
      // An interrupted turn's error says so in words ("Turn interrupted: …"), as its prompt's error did live.
      if ("stopReason" in end) endTurn(end.stopReason);
      else failTurn(end.error);
      return;
    }
    // A request asked draws nothing: the request itself did live, and the mark that settles it does in a replay.
    if ("permissionAsked" in mark) return;
    transcript.permission(PermissionCard.settled(sessionId, mark.permission, actions));
    scheduler.touch();
  }

  function apply(notification: SessionNotification): void {
    const u = notification.update;
    const mark = readMark(u);
    if (mark !== undefined) return showMark(notification.sessionId, mark);
    if (transcript.draw(u)) return;
    switch (u.sessionUpdate) {
      case "plan":
        plan.show(u.entries);
        break;
      case "available_commands_update":
        composer.setCommands(u.availableCommands);
        break;
      case "current_mode_update":
        selectors.currentMode(u.currentModeId);
        break;
      case "config_option_update":
        selectors.setConfigOptions(u.configOptions);
        break;
      case "session_info_update":
        if (u.title) {
          firstTitle ??= u.title;
          titled = true;
          title.textContent = u.title;
        } else if (u.title === null) {
          titled = firstTitle !== undefined;
          title.textContent = firstTitle ?? fallbackTitle;
        }
        break;
      default:
        break;
    }
  }

  return {
    update(notification: SessionNotification): void {
      // A malformed update from the agent shows as an error in the transcript
      // instead of throwing into the host's message loop.
      try {
        apply(notification);
      } catch (err) {
        const kind = String((notification as { update?: { sessionUpdate?: unknown } } | null)?.update?.sessionUpdate ?? "unknown");
        transcript.error(`Could not show an update (${kind}): ${err instanceof Error ? err.message : String(err)}`);
        scheduler.touch();
      }
    },
    permissionRequested(requestId: PermissionRequestId, request: RequestPermissionRequest): void {
      if (permissions.has(requestId)) return;
      const card = new PermissionCard(requestId, request, (optionId) => {
        host.answerPermission(requestId, optionId);
        showStatus();
      }, actions);
      permissions.set(requestId, card);
      transcript.permission(card);
      // Drawn now, so the view goes to it (or says it is there) before the status line speaks of it.
      follower.added("permission");
      showStatus();
      scheduler.touch();
    },
    revealPermission(): boolean {
      const card = openCard();
      if (card === undefined) return false;
      // What is pending is drawn (and the reader kept at the bottom) first, so nothing moves the card away after.
      scheduler.flush();
      card.reveal();
      follower.moved();
      return true;
    },
    permissionSettled(requestId: PermissionRequestId, how: PermissionSettlement): void {
      // Kept once settled too: an answer given here may still lose to one given
      // elsewhere, and a host that learns later who answered tells it anew.
      permissions.get(requestId)?.settle(how);
      showStatus();
    },
    turnStarted(): void {
      setBusy(true);
    },
    turnEnded: endTurn,
    turnFailed: failTurn,
    error: showError,
    setModes(modes: SessionModeState | null): void {
      selectors.setModes(modes);
    },
    setConfigOptions(options: SessionConfigOption[]): void {
      selectors.setConfigOptions(options);
    },
    setBusy,
    setConnection(state: ConnectionState): void {
      connection.textContent = CONNECTION_LABELS[state];
      connection.hidden = state === "connected";
      connection.dataset["state"] = state;
      view.dataset["connection"] = state;
      composer.setOffline(state !== "connected");
    },
    setUnavailable(unavailable: Unavailable | undefined): void {
      composer.setUnavailable(unavailable);
      view.dataset["unavailable"] = String(unavailable !== undefined);
    },
    setName(name: string): void {
      fallbackTitle = name;
      if (!titled) title.textContent = name;
    },
    setDraft(text: string): void {
      composer.setDraft(text);
    },
    setEarlier(more: boolean): void {
      earlier.show(more && host.loadEarlier !== undefined);
    },
    dispose(): void {
      scheduler.dispose();
      transcript.dispose();
      follower.dispose();
      earlier.dispose();
      permissions.clear();
      view.remove();
    },
  };
}
