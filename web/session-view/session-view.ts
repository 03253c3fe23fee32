// createSessionView: composes the parts of the view (header with selectors
// and connection state, transcript, plan, composer) and routes each
// session/update to the part that draws it. Unknown update kinds are ignored,
// so a newer agent does not break an older view. The marks of a replayed
// history (a turn's end, a settled permission request: protocol/history.ts)
// draw what the live turn drew from the prompt's answer and the request.
import type { RequestPermissionRequest, SessionConfigOption, SessionModeState, SessionNotification, StopReason } from "@agentclientprotocol/sdk";
import { type HistoryMark, readMark } from "../../protocol/history.ts";
import type { ConnectionState, PermissionRequestId, PermissionSettlement, SessionView, SessionViewHost } from "./api.ts";
import { Composer } from "./composer.ts";
import { el } from "./dom.ts";
import { PermissionCard } from "./permissions.ts";
import { PlanPanel } from "./plan.ts";
import { FrameScheduler } from "./scheduler.ts";
import { Selectors } from "./selectors.ts";
import { Transcript } from "./transcript.ts";

/** How close to the bottom (pixels) the reader must be for new output to keep scrolling into view. */
const FOLLOW_SLACK_PX = 48;

const CONNECTION_LABELS: Record<ConnectionState, string> = {
  connecting: "Connecting…",
  connected: "",
  reconnecting: "Connection lost, reconnecting…",
  disconnected: "Disconnected",
};

export function createSessionView(root: HTMLElement, host: SessionViewHost): SessionView {
  let following = true;
  let busy = false;
  const scheduler = new FrameScheduler(() => {
    if (following) transcript.element.scrollTop = transcript.element.scrollHeight;
  });
  const transcript = new Transcript(scheduler);
  const plan = new PlanPanel();
  const selectors = new Selectors(host);
  const permissions = new Map<PermissionRequestId, PermissionCard>();
  const title = el("h1", { class: "sv-title" }, "Session");
  const connection = el("div", { class: "sv-connection", role: "status", hidden: true });
  const status = el("div", { class: "sv-turn-status", role: "status" });
  const composer = new Composer({
    send: (text) => host.prompt(text),
    cancel: () => cancelTurn(),
    draftChanged: (text) => host.draftChanged?.(text),
  });

  const view = el(
    "div",
    { class: "sv-root" },
    el("header", { class: "sv-header" }, title, selectors.element),
    connection,
    transcript.element,
    el("div", { class: "sv-footer" }, plan.element, status, composer.element),
  );
  root.append(view);

  const onScroll = (): void => {
    const t = transcript.element;
    following = t.scrollHeight - t.scrollTop - t.clientHeight < FOLLOW_SLACK_PX;
  };
  transcript.element.addEventListener("scroll", onScroll, { passive: true });

  // Cancelling a turn answers its open permission requests as cancelled, as ACP asks of clients.
  function cancelTurn(): void {
    if (!busy) return;
    for (const card of permissions.values()) card.cancel();
    host.cancel();
  }

  function setBusy(next: boolean): void {
    busy = next;
    composer.setBusy(next);
    status.textContent = next ? "The agent is working… (Esc to stop)" : "";
    view.classList.toggle("sv-busy", next);
  }

  function endTurn(stopReason: StopReason): void {
    scheduler.flush();
    transcript.endStream();
    transcript.turnEnded(stopReason);
    setBusy(false);
    scheduler.touch();
  }

  function showError(message: string): void {
    transcript.error(message);
    scheduler.touch();
  }

  function showMark(sessionId: string, mark: HistoryMark): void {
    if ("turnEnd" in mark) {
      const end = mark.turnEnd;
      if ("stopReason" in end) {
        endTurn(end.stopReason);
      } else {
        // As a host shows a prompt that failed: its error, and the turn is over.
        showError(end.error);
        setBusy(false);
      }
      return;
    }
    transcript.add(PermissionCard.settled(sessionId, mark.permission).element);
    scheduler.touch();
  }

  function apply(notification: SessionNotification): void {
    const u = notification.update;
    const mark = readMark(u);
    if (mark !== undefined) return showMark(notification.sessionId, mark);
    switch (u.sessionUpdate) {
      case "user_message_chunk":
      case "agent_message_chunk":
      case "agent_thought_chunk":
        transcript.chunk(u);
        break;
      case "tool_call":
      case "tool_call_update":
        transcript.toolCall(u);
        scheduler.touch();
        break;
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
        if (u.title) title.textContent = u.title;
        break;
      case "notice":
        transcript.notice(u.description ? `${u.title}: ${u.description}` : u.title, u.severity);
        scheduler.touch();
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
      const card = new PermissionCard(requestId, request, (optionId) => host.answerPermission(requestId, optionId));
      permissions.set(requestId, card);
      transcript.add(card.element);
      scheduler.touch();
    },
    revealPermission(): boolean {
      const card = [...permissions.values()].find((c) => c.open);
      if (card === undefined) return false;
      // What is pending is drawn (and the reader kept at the bottom) first, so nothing moves the card away after.
      scheduler.flush();
      card.reveal();
      onScroll();
      return true;
    },
    permissionSettled(requestId: PermissionRequestId, how: PermissionSettlement): void {
      // Kept until settled: an answer given here may still lose to one given elsewhere.
      permissions.get(requestId)?.settle(how);
      permissions.delete(requestId);
    },
    turnStarted(): void {
      setBusy(true);
    },
    turnEnded: endTurn,
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
    setDraft(text: string): void {
      composer.setDraft(text);
    },
    dispose(): void {
      scheduler.dispose();
      transcript.dispose();
      transcript.element.removeEventListener("scroll", onScroll);
      permissions.clear();
      view.remove();
    },
  };
}
