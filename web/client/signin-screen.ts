// Shown when the page has no token, or the server refused the one it has: a
// plain explanation and a field for a new pairing link (or a bare token).
import { showScreen } from "./attention.ts";
import { h } from "./dom.ts";
import type { Screen } from "./screen.ts";
import { saveToken, tokenFromLink } from "./token-store.ts";

/**
 * Why the page asks for a link: none yet, one just opened or pasted that the
 * server refused (mistyped, cut short, of another server), or a stored one the
 * server no longer accepts (revoked or replaced).
 */
export type SignInReason = "no-token" | "not-accepted" | "unpaired";

/** How to get a link, for a server run by the editor and for one started in a terminal. */
const HOW_TO_PAIR =
  "To pair: in VS Code, run ACP Remote: Connect a Device and scan its QR code; for a server started in a terminal (acp-remote serve, npm start), open the pairing link it printed when it started.";

const SIGN_IN_MESSAGES: Record<SignInReason, string> = {
  "no-token": `This browser is not paired yet. ${HOW_TO_PAIR}`,
  "not-accepted": `The server did not accept this pairing link: it may be mistyped, cut short or from another server. ${HOW_TO_PAIR}`,
  unpaired: `This device is no longer paired. ${HOW_TO_PAIR}`,
};

export function openSignInScreen(root: HTMLElement, reason: SignInReason, onDone: () => void): Screen {
  const input = h("input", { id: "wc-link-input", type: "text", autocomplete: "off", autocapitalize: "off", spellcheck: "false", placeholder: "https://…/#token=…" });
  const form = h(
    "form",
    { class: "wc-signin-form" },
    h("label", { for: "wc-link-input" }, "Pairing link or token"),
    input,
    h("button", { type: "submit", class: "wc-primary" }, "Connect"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = input.value.trim();
    const token = tokenFromLink(value) ?? (value.includes("#") ? undefined : value);
    if (!token) return;
    saveToken(token);
    onDone();
  });
  root.replaceChildren(
    h(
      "main",
      { class: "wc-signin" },
      h("h1", {}, "ACP Remote"),
      // Read out politely: a first visit is no error, and a device no longer
      // paired sees this on every load. Only a link just opened or pasted and
      // refused is announced at once, as the answer to what the person did.
      h("p", { class: "wc-message", role: reason === "not-accepted" ? "alert" : "status", "data-reason": reason }, SIGN_IN_MESSAGES[reason]),
      form,
    ),
  );
  showScreen("Pair this browser");
  return { dispose() {} };
}
