// The page: takes a pairing link's token out of the address bar, checks it,
// and shows one screen at a time by the URL fragment:
//   #/                     the session list and the new-session form
//   #/s/<agent>/<session>  one session (a reload resumes it)
// The token itself never goes in a URL the page makes.
import { fetchAgents, type AgentList } from "./agents.ts";
import { showScreen } from "./attention.ts";
import { h } from "./dom.ts";
import { openListScreen } from "./list-screen.ts";
import { describe, type Screen } from "./screen.ts";
import { registerServiceWorker } from "./service-worker.ts";
import { openSessionScreen } from "./session-screen.ts";
import { openSignInScreen, type SignInReason } from "./signin-screen.ts";
import { pageBase } from "./endpoint.ts";
import { adoptFragmentToken, forgetToken, storedToken } from "./token-store.ts";
import { UnauthorizedError } from "./transport.ts";

type Route = { kind: "list" } | { kind: "session"; agent: string; sessionId: string };

function parseRoute(hash: string): Route {
  const match = /^#\/s\/([^/]+)\/([^/]+)$/.exec(hash);
  if (match) return { kind: "session", agent: decodeURIComponent(match[1]!), sessionId: decodeURIComponent(match[2]!) };
  return { kind: "list" };
}

/** Why the page cannot start, plainly: a failed fetch (offline, the server stopped) means the server is out of reach. */
function unreachable(error: unknown): string {
  if (navigator.onLine === false) return "The server is out of reach: this device is offline. Try again once it is back online.";
  if (error instanceof TypeError) return "The server is out of reach: check that it runs and that this device can reach it (the same network, or its public address), then try again.";
  return `The server cannot be reached: ${describe(error)}`;
}

function sessionHash(agent: string, sessionId: string): string {
  return `#/s/${encodeURIComponent(agent)}/${encodeURIComponent(sessionId)}`;
}

export function startApp(root: HTMLElement): void {
  /** The token came from a link or a paste just now and has not been accepted yet. */
  let freshToken = adoptFragmentToken();
  // The folder the page was served from: behind a proxy, under its path prefix.
  const base = pageBase();
  // The offline shell and notifications: the page works without them where the browser has no service worker.
  const serviceWorker = registerServiceWorker();
  let screen: Screen | undefined;
  let agents: AgentList | undefined;
  /** A new session to start, set by the form until the session screen has it. */
  let pendingNew: { agent: string; cwd: string } | undefined;

  /** Screens shown so far: the first one is the page's load, where the browser puts the focus itself. */
  let shown = 0;

  /** `next` is drawn already: the last screen goes, and the focus moves to the new one's heading (a screen reader reads where it is). */
  function show(next: Screen): void {
    screen?.dispose();
    screen = next;
    if (shown++ === 0) return;
    const heading = root.querySelector("h1");
    if (heading === null) return;
    if (!heading.hasAttribute("tabindex")) heading.tabIndex = -1;
    heading.focus({ preventScroll: true });
  }

  function signIn(reason: SignInReason): void {
    agents = undefined;
    show(openSignInScreen(root, reason, () => {
      freshToken = true;
      history.replaceState(null, "", `${location.pathname}#/`);
      void render();
    }));
  }

  const unauthorized = (): void => signIn(freshToken ? "not-accepted" : "unpaired");

  async function render(): Promise<void> {
    const token = storedToken();
    if (agents === undefined) {
      try {
        agents = await fetchAgents({ base, token });
      } catch (error) {
        if (error instanceof UnauthorizedError) return signIn(token === null ? "no-token" : freshToken ? "not-accepted" : "unpaired");
        const retry = h("button", { type: "button", class: "wc-primary" }, "Try again");
        retry.addEventListener("click", () => void render());
        root.replaceChildren(h("main", { class: "wc-signin" }, h("h1", {}, "ACP Remote"), h("p", { class: "wc-message", role: "alert" }, unreachable(error)), retry));
        showScreen("Out of reach");
        show({ dispose() {} });
        return;
      }
      freshToken = false;
    }
    const route = parseRoute(location.hash);
    const endpoint = { base, token };
    if (pendingNew !== undefined) {
      const { agent, cwd } = pendingNew;
      pendingNew = undefined;
      show(openSessionScreen({
        root,
        endpoint: { ...endpoint, agent },
        target: { cwd },
        onCreated: (sessionId) => history.pushState(null, "", sessionHash(agent, sessionId)),
        onUnauthorized: unauthorized,
        onBack: () => (location.hash = "#/"),
      }));
      return;
    }
    if (route.kind === "session") {
      show(openSessionScreen({
        root,
        endpoint: { ...endpoint, agent: route.agent },
        target: { sessionId: route.sessionId },
        onCreated: () => undefined,
        onUnauthorized: unauthorized,
        onBack: () => (location.hash = "#/"),
      }));
      return;
    }
    show(openListScreen({
      root,
      endpoint,
      agents,
      onOpen: (agent, sessionId) => (location.hash = sessionHash(agent, sessionId)),
      onNew: (agent, cwd) => {
        pendingNew = { agent, cwd };
        void render();
      },
      onUnauthorized: unauthorized,
      onForget: () => {
        forgetToken();
        signIn("no-token");
      },
      serviceWorker,
    }));
  }

  addEventListener("hashchange", () => {
    // A pairing link opened while the page is open.
    if (adoptFragmentToken()) {
      freshToken = true;
      agents = undefined;
    }
    void render();
  });
  void render();
}
