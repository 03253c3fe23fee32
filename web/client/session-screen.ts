// One session on screen: the shared session view (web/session-view) fed from
// an AcpClient of the session's agent. When the link drops, the screen
// reconnects, loads the session again and draws it afresh from the server's
// replay (a new view, the draft prompt carried over), so nothing shows twice.
// A turn this page did not start (another client's, or one from before a
// reload) is followed by the server's state updates: busy while it runs,
// "waiting" in the title while it waits for an answer, its end drawn when it
// ends. Opened on a session that waits, the page brings the request into view.
// The page's title names the session by its title (the agent's, or its first
// prompt's: the server tells it as `session_info_update`), else by its name as
// every view names it ("agent · short id", protocol/names.ts).
import type { SessionNotification, StopReason } from "@agentclientprotocol/sdk";
import { sessionName } from "../../protocol/names.ts";
import { createSessionView, type EarlierPage, type PermissionResolution, type SessionView } from "../session-view/index.ts";
import { AcpClient, earlierTurnsOf, newRequestKey, runningFlag, type StateNotice } from "./acp-client.ts";
import { leaveSession, renameSession, type ScreenMark, sessionKey, setSessionWaiting, showScreen, showSession } from "./attention.ts";
import { h } from "./dom.ts";
import type { Endpoint } from "./endpoint.ts";
import { DEFAULT_HISTORY_PAGE_TURNS, DEFAULT_RUNNING_POLL_MS } from "./limits.ts";
import { Reconnector } from "./reconnect.ts";
import { describe, type Screen } from "./screen.ts";
import { LINK_LOST, RpcError } from "./rpc.ts";
import { UnauthorizedError, type LinkEnd } from "./transport.ts";
import { SessionState } from "./wire.ts";

export interface SessionScreenOptions {
  root: HTMLElement;
  /** The session's agent is `endpoint.agent`. */
  endpoint: Endpoint;
  /** An existing session, or a new one in `cwd`. */
  target: { sessionId: string } | { cwd: string };
  onCreated(sessionId: string): void;
  onUnauthorized(): void;
  onBack(): void;
}

export function openSessionScreen(options: SessionScreenOptions): Screen {
  const { endpoint } = options;
  let sessionId = "sessionId" in options.target ? options.target.sessionId : undefined;
  /**
   * Names the session this screen creates, on every try: a try whose answer
   * was lost with the link is answered, on the next, with the session it made.
   */
  const requestKey = newRequestKey();
  /**
   * Updates that come while session/new is unanswered: when a try is answered
   * again, the server replays the session's history before the answer, which
   * names the session they belong to.
   */
  let beforeAnswer: SessionNotification[] | undefined;
  let client: AcpClient | undefined;
  /** Turns of the history before those the view shows (the server replayed the latest only): the next page ends there. */
  let earlier = 0;
  let disposed = false;
  /** A prompt of this page is waiting for its answer on the current link. */
  let localTurn = false;
  let pollTimer: ReturnType<typeof setTimeout> | undefined;
  /** session/load is replaying the history: its prompts are not new turns. */
  let replaying = false;
  /** What the server said of the agent when it could not serve, while that lasts. */
  let agentError: string | undefined;
  /** The session's name without its title ("agent · short id"), once it is known. */
  const nameOf = (id: string): string => sessionName({ sessionId: id, agent: endpoint.agent ?? "" });
  /** The session's title, for the page's title. */
  let title = sessionId === undefined ? UNTITLED : nameOf(sessionId);
  /**
   * While a load opens the session: whether its answer and the first state
   * update came. The requests still open when the load began are delivered
   * before either, so until both came an open request is brought into view.
   */
  let opening: { answered: boolean; stateSeen: boolean } | undefined;

  // A link, named for where it goes: the arrow is drawn, not read out.
  const back = h("a", { class: "wc-back", href: "#/", "aria-label": "Back to sessions" }, h("span", { "aria-hidden": "true" }, "‹"), "Sessions");
  back.addEventListener("click", (event) => {
    event.preventDefault();
    options.onBack();
  });
  const link = h("span", { class: "wc-link", "data-profile": "" });
  const bar = h("nav", { class: "wc-bar", "aria-label": "Session" }, back, h("span", { class: "wc-agent" }, endpoint.agent ?? ""), link);
  // The session view holds the screen's one heading (the session's title).
  const holder = h("main", { class: "wc-view" });
  options.root.replaceChildren(h("div", { class: "wc-session" }, bar, holder));

  let view = createView();
  view.setConnection("connecting");
  /** This screen's claim to the page's title, once its session is known. */
  let onScreen: ScreenMark | undefined = sessionId === undefined ? undefined : showSession(sessionKey(endpoint.agent ?? "", sessionId), title);
  if (onScreen === undefined) showScreen("New session");

  function createView(): SessionView {
    const created = createSessionView(holder, {
      prompt: (text) => prompt(text),
      cancel: () => {
        if (client && sessionId) client.cancel(sessionId);
      },
      answerPermission: (requestId, optionId) => client?.answerPermission(requestId, optionId),
      setMode: (modeId) => {
        if (client && sessionId) client.setMode(sessionId, modeId).catch((e: unknown) => view.error(describe(e)));
      },
      setConfigOption: (configId, value) => {
        if (client && sessionId) client.setConfigOption(sessionId, configId, value).catch((e: unknown) => view.error(describe(e)));
      },
      loadEarlier: () => loadEarlier(),
    });
    if (sessionId !== undefined) created.setName(nameOf(sessionId));
    return created;
  }

  /** The page of turns before those shown, which the view asks for when the person scrolls up to them. */
  async function loadEarlier(): Promise<EarlierPage> {
    const current = client;
    const id = sessionId;
    if (current === undefined || id === undefined) throw new Error("not connected");
    const page = await current.earlierTurns(id, earlier, DEFAULT_HISTORY_PAGE_TURNS);
    // A link renewed meanwhile drew the session afresh, with a count of its own.
    if (client !== current) throw new Error("the connection was renewed");
    earlier = page.earlier;
    return { notifications: page.updates.map((update) => ({ sessionId: id, update })), more: earlier > 0 };
  }

  /**
   * A fresh view for a replay, keeping what the person was typing, and the
   * focus where it was: in the prompt box (the caret too), else on the new
   * view's heading, so that it never falls back to the page.
   */
  function freshView(): void {
    const old = holder.querySelector("textarea");
    const draft = old?.value ?? "";
    const focused = holder.contains(document.activeElement);
    const caret = old !== null && document.activeElement === old ? ([old.selectionStart, old.selectionEnd] as const) : undefined;
    view.dispose();
    view = createView();
    const input = holder.querySelector("textarea");
    if (input) input.value = draft;
    if (input && caret) {
      input.focus({ preventScroll: true });
      input.setSelectionRange(caret[0], caret[1]);
    } else if (focused) {
      holder.querySelector("h1")?.focus({ preventScroll: true });
    }
  }

  /** The session's title changed (the list said it, or the server told it). */
  function retitle(next: string): void {
    title = next;
    if (onScreen !== undefined) renameSession(onScreen, next);
  }

  function noteTitle(notification: SessionNotification): void {
    const update = notification.update;
    if (update.sessionUpdate === "session_info_update" && typeof update.title === "string" && update.title !== "") retitle(update.title);
  }

  function prompt(text: string): void {
    if (!client || !sessionId) {
      // Nothing was sent: the text goes back in the box, to send when the link is back.
      view.setDraft(text);
      view.error("Not connected: the prompt was not sent. It is back in the box; send it when the page is connected again.");
      return;
    }
    const id = sessionId;
    // The server journals the prompt for a replay but does not echo it live.
    view.update({ sessionId: id, update: { sessionUpdate: "user_message_chunk", content: { type: "text", text } } });
    view.turnStarted();
    localTurn = true;
    const current = client;
    current.prompt(id, text).then(
      (response) => {
        if (client !== current) return;
        localTurn = false;
        view.turnEnded(response.stopReason);
      },
      (error: unknown) => {
        if (client !== current) return;
        localTurn = false;
        // A lost link leaves the turn running on the server; the resume tells how it stands.
        if (error instanceof RpcError && error.code === LINK_LOST) return;
        view.turnFailed(describe(error));
      },
    );
  }

  const events = {
    onUpdate(notification: SessionNotification): void {
      if (sessionId === undefined && beforeAnswer !== undefined) {
        beforeAnswer.push(notification);
        return;
      }
      if (notification.sessionId !== sessionId) return;
      view.update(notification);
      noteTitle(notification);
      // Another client's prompt: its turn runs here too.
      if (notification.update.sessionUpdate === "user_message_chunk" && !localTurn && !replaying && client !== undefined) showRunning(true);
    },
    onPermission(requestId: string | number, request: Parameters<SessionView["permissionRequested"]>[1]): void {
      if (request.sessionId !== sessionId) return;
      view.permissionRequested(requestId, request);
      // An open request means a turn runs, also one started before a reload.
      if (!localTurn) showRunning(true);
      reveal();
    },
    onState(id: string, notice: StateNotice): void {
      if (id !== sessionId) return;
      setSessionWaiting(sessionKey(endpoint.agent ?? "", id), title, notice.state === SessionState.RequiresAction);
      if (opening) {
        opening.stateSeen = true;
        reveal();
      }
      // The answer to this page's own prompt ends its turn (the state comes just before it).
      if (localTurn) return;
      if (notice.state !== SessionState.Idle) view.setBusy(true);
      else if (notice.stopReason === "error") view.turnFailed(notice.error ?? "The turn failed.");
      else if (notice.stopReason !== undefined) view.turnEnded(notice.stopReason as StopReason);
      // An idle without a stop reason ends no turn: the state after a load.
      else view.setBusy(false);
    },
    onPermissionWithdrawn(requestId: string | number, resolution: PermissionResolution | undefined): void {
      // Who answered what ("Allowed on Pixel 8", "Allowed in the editor"), or only that it went.
      view.permissionSettled(requestId, resolution ?? "withdrawn");
    },
    onEnd(end: LinkEnd): void {
      if (disposed) return;
      client = undefined;
      localTurn = false;
      if (end === "unauthorized") return options.onUnauthorized();
      view.setConnection("reconnecting");
      reconnector.start();
    },
  };

  /** Connects and opens the session (creates it the first time); false when it should be tried again. */
  async function attach(): Promise<boolean> {
    let next: AcpClient;
    try {
      next = await AcpClient.connect(endpoint, events);
    } catch (error) {
      if (error instanceof UnauthorizedError) {
        options.onUnauthorized();
        return true;
      }
      // The server answered, but its agent cannot serve (it fails to start,
      // say): that is no network problem, so say what it is, and keep trying
      // in case the agent is fixed and the server restarted.
      if (error instanceof RpcError) agentUnavailable(describe(error));
      return false;
    }
    if (disposed) {
      next.close();
      return true;
    }
    try {
      if (sessionId === undefined) {
        const cwd = "cwd" in options.target ? options.target.cwd : "";
        const early: SessionNotification[] = (beforeAnswer = []);
        const created = await next.newSession(cwd, requestKey).finally(() => (beforeAnswer = undefined));
        sessionId = created.sessionId;
        client = next;
        if (title === UNTITLED) title = nameOf(created.sessionId);
        view.setName(nameOf(created.sessionId));
        onScreen = showSession(sessionKey(endpoint.agent ?? "", created.sessionId), title);
        options.onCreated(created.sessionId);
        view.setModes(created.modes ?? null);
        view.setConfigOptions(created.configOptions ?? []);
        for (const notification of early) {
          if (notification.sessionId !== sessionId) continue;
          view.update(notification);
          noteTitle(notification);
        }
      } else {
        const info = (await next.listSessions()).find((s) => s.sessionId === sessionId);
        if (info === undefined) {
          next.close();
          gone();
          return true;
        }
        freshView();
        client = next;
        if (info.title) retitle(info.title);
        replaying = true;
        opening = { answered: false, stateSeen: !next.stateUpdates };
        // The latest turns first: a long session opens at once, and the earlier ones come as the person scrolls up.
        const loaded = await next.loadSession(info.sessionId, info.cwd, DEFAULT_HISTORY_PAGE_TURNS).finally(() => (replaying = false));
        earlier = earlierTurnsOf(loaded);
        view.setEarlier(earlier > 0);
        view.setModes(loaded.modes ?? null);
        view.setConfigOptions(loaded.configOptions ?? []);
        showRunning(runningFlag(loaded) ?? runningFlag(info));
        if (opening) {
          opening.answered = true;
          reveal();
        }
      }
    } catch (error) {
      next.close();
      if (client === next) client = undefined;
      if (error instanceof RpcError && error.code !== LINK_LOST) {
        view.error(describe(error));
        view.setConnection("disconnected");
        return true;
      }
      return false;
    }
    agentError = undefined;
    link.dataset["profile"] = next.profile;
    link.textContent = next.profile === "websocket" ? "" : "HTTP";
    view.setConnection("connected");
    tellVisibility();
    return true;
  }

  /**
   * A turn that runs on the server without a prompt of this page waiting (one
   * started before a reload, or by another client): busy until it stops, since
   * its answer goes to whoever sent it. The server's state updates tell when;
   * from a server without them, session/list is asked now and then.
   */
  function showRunning(running: boolean | undefined): void {
    if (running === undefined) return;
    view.setBusy(running);
    if (running && client !== undefined && !client.stateUpdates) pollRunning();
  }

  /**
   * While the session opens, brings an open permission request into view and
   * focuses it, once; the opening ends with that, or once the load was
   * answered and the state after it came.
   */
  function reveal(): void {
    if (opening === undefined) return;
    if (view.revealPermission() || (opening.answered && opening.stateSeen)) opening = undefined;
  }

  function pollRunning(): void {
    clearTimeout(pollTimer);
    pollTimer = setTimeout(() => {
      const current = client;
      if (disposed || !current || localTurn || sessionId === undefined) return;
      current.listSessions().then(
        (sessions) => {
          const info = sessions.find((s) => s.sessionId === sessionId);
          if (client !== current || localTurn || !info) return;
          const running = runningFlag(info);
          if (running === false) view.setBusy(false);
          else pollRunning();
        },
        () => undefined,
      );
    }, DEFAULT_RUNNING_POLL_MS);
  }

  /** Shows why the agent cannot serve, once per reason. */
  function agentUnavailable(message: string): void {
    view.setConnection("disconnected");
    if (agentError === message) return;
    agentError = message;
    view.error(`The agent cannot serve this session: ${message}`);
  }

  function gone(): void {
    view.setConnection("disconnected");
    view.error("This session is no longer on the server.");
  }

  /** The server notifies nobody of this session while the page shows it where a person can see it. */
  function tellVisibility(): void {
    if (client && sessionId !== undefined) client.setVisibility(sessionId, document.visibilityState === "visible");
  }
  document.addEventListener("visibilitychange", tellVisibility);

  const reconnector = new Reconnector(attach);
  void attach().then((done) => {
    if (!done && !disposed) {
      if (agentError === undefined) view.setConnection("reconnecting");
      reconnector.start();
    }
  });

  return {
    dispose() {
      disposed = true;
      if (onScreen !== undefined) leaveSession(onScreen);
      reconnector.stop();
      document.removeEventListener("visibilitychange", tellVisibility);
      clearTimeout(pollTimer);
      client?.close();
      view.dispose();
    },
  };
}

const UNTITLED = "Untitled session";
