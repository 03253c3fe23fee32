// "Notify me on this phone" on the session list: turns Web Push on for this
// paired device (the browser's subscription, kept by the server with the
// device over /acp's `_acp-remote/push/subscribe`), or off again, and says
// plainly why it cannot when it cannot: no HTTPS, no push in this browser, a
// token that is no paired device's, notifications blocked, or a push service
// that does not answer. A subscription the browser already holds is sent
// again each time the list opens, so the server has it even if it dropped it.
import { AcpClient } from "./acp-client.ts";
import { h } from "./dom.ts";
import type { Endpoint } from "./endpoint.ts";
import { currentSubscription, pushUnavailable, subscribe } from "./push.ts";
import { describe } from "./screen.ts";

export interface NotifyControlOptions {
  endpoint: Omit<Endpoint, "agent">;
  /** The agents to open the link with, tried in order: any will do (the subscription is the device's, not an agent's), but one may be down. */
  agents: readonly string[];
  /** The service worker's registration; undefined where there is none. */
  serviceWorker: Promise<ServiceWorkerRegistration | undefined>;
}

const HOW_TO_PAIR = "To be notified on this phone, pair it as a device: in VS Code, run ACP Remote: Connect a Device and scan its QR code.";
const BLOCKED = "Notifications are blocked for this page: allow them in the browser's site settings, then try again.";
const ON = "This phone is notified when a session waits for you, when a turn ends and when an agent fails.";

/** A short-lived link, for one request about this device, through the first agent that answers. */
async function withClient<T>(options: NotifyControlOptions, use: (client: AcpClient) => Promise<T>): Promise<T> {
  let client: AcpClient | undefined;
  let failure: unknown = new Error("no agent is configured");
  for (const agent of options.agents) {
    try {
      client = await AcpClient.connect({ ...options.endpoint, agent }, { onUpdate() {}, onPermission() {}, onPermissionWithdrawn() {}, onState() {}, onEnd() {} });
      break;
    } catch (error) {
      failure = error;
    }
  }
  if (client === undefined) throw failure;
  try {
    return await use(client);
  } finally {
    client.close();
  }
}

export function openNotifyControl(options: NotifyControlOptions): { element: HTMLElement; dispose(): void } {
  let disposed = false;
  const status = h("p", { class: "wc-notify-status", role: "status" });
  const button = h("button", { type: "button", class: "wc-notify-button", hidden: true });
  const element = h("section", { class: "wc-notify", "aria-label": "Notifications", "data-state": "checking" }, status, button);
  let action: (() => Promise<void>) | undefined;
  button.addEventListener("click", () => {
    if (action === undefined) return;
    const run = action;
    button.disabled = true;
    void run().finally(() => (button.disabled = false));
  });

  /** Shows a state: its text, and its button when it has one. */
  function show(state: string, text: string, next?: { label: string; run: () => Promise<void> }, alert = false): void {
    if (disposed) return;
    element.dataset["state"] = state;
    status.textContent = text;
    status.setAttribute("role", alert ? "alert" : "status");
    action = next?.run;
    button.hidden = next === undefined;
    button.textContent = next?.label ?? "";
  }

  function off(key: string, registration: ServiceWorkerRegistration, text = "Get a notification on this phone when a session waits for you.", alert = false): void {
    show("off", text, { label: "Notify me on this phone", run: () => turnOn(key, registration) }, alert);
  }

  function on(key: string, registration: ServiceWorkerRegistration): void {
    show("on", ON, { label: "Turn off", run: () => turnOff(key, registration) });
  }

  async function turnOn(key: string, registration: ServiceWorkerRegistration): Promise<void> {
    show("working", "Turning notifications on…");
    if ((await Notification.requestPermission()) !== "granted") return show("blocked", BLOCKED, undefined, true);
    try {
      const subscription = await subscribe(registration, key);
      await withClient(options, (client) => client.pushSubscribe(subscription.toJSON()));
      on(key, registration);
    } catch (error) {
      off(key, registration, describe(error), true);
    }
  }

  async function turnOff(key: string, registration: ServiceWorkerRegistration): Promise<void> {
    show("working", "Turning notifications off…");
    try {
      await withClient(options, (client) => client.pushUnsubscribe());
      await (await currentSubscription(registration, key))?.unsubscribe();
      off(key, registration);
    } catch (error) {
      show("on", `Notifications are still on: ${describe(error)}`, { label: "Turn off", run: () => turnOff(key, registration) }, true);
    }
  }

  async function start(): Promise<void> {
    const unavailable = pushUnavailable();
    if (unavailable !== undefined) return show("unavailable", unavailable);
    const [key, registration] = await Promise.all([withClient(options, async (client) => client.webPushKey), options.serviceWorker]);
    if (key === undefined) return show("unpaired", HOW_TO_PAIR);
    if (registration === undefined) return show("unavailable", "This browser did not start the page's service worker, which shows notifications.");
    if (Notification.permission === "denied") return show("blocked", BLOCKED);
    const held = await currentSubscription(registration, key);
    if (held === undefined) return off(key, registration);
    // The server may have dropped it (its push service said it was gone): it gets it again.
    await withClient(options, (client) => client.pushSubscribe(held.toJSON()));
    on(key, registration);
  }

  start().catch((error: unknown) => show("error", `Notifications cannot be set up now: ${describe(error)}`));
  return {
    element,
    dispose() {
      disposed = true;
    },
  };
}
