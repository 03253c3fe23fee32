// The page: takes a pairing link's token out of the address bar, checks it,
// and shows one screen at a time by the URL fragment:
//   #/                     the session list and the new-session form
//   #/s/<agent>/<session>  one session (a reload resumes it)
// The token itself never goes in a URL the page makes.
import { fetchAgents, type AgentList } from "./agents.ts";
import { h } from "./dom.ts";
import { openListScreen } from "./list-screen.ts";
import { describe, type Screen } from "./screen.ts";
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

function sessionHash(agent: string, sessionId: string): string {
  return `#/s/${encodeURIComponent(agent)}/${encodeURIComponent(sessionId)}`;
}

export function startApp(root: HTMLElement): void {
  /** The token came from a link or a paste just now and has not been accepted yet. */
  let freshToken = adoptFragmentToken();
  // The folder the page was served from: behind a proxy, under its path prefix.
  const base = pageBase();
  let screen: Screen | undefined;
  let agents: AgentList | undefined;
  /** A new session to start, set by the form until the session screen has it. */
  let pendingNew: { agent: string; cwd: string } | undefined;

  function show(next: Screen): void {
    screen?.dispose();
    screen = next;
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
        show({ dispose() {} });
        root.replaceChildren(h("main", { class: "wc-signin" }, h("h1", {}, "ACP Remote"), h("p", { class: "wc-message", role: "alert" }, `The server cannot be reached: ${describe(error)}`), retry));
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
