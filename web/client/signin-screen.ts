// Shown when the page has no token, or the server refused the one it has: a
// plain explanation and a field for a new pairing link (or a bare token).
import { h } from "./dom.ts";
import type { Screen } from "./screen.ts";
import { saveToken, tokenFromLink } from "./token-store.ts";

export type SignInReason = "unpaired" | "no-token";

export const UNPAIRED_MESSAGE = "This device is no longer paired. Pair it again from the editor: ACP Remote: Connect a Device.";
const NO_TOKEN_MESSAGE = "Open the pairing link from the editor (ACP Remote: Connect a Device) on this device, or paste it here.";

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
      h("p", { class: "wc-message", role: "alert", "data-reason": reason }, reason === "unpaired" ? UNPAIRED_MESSAGE : NO_TOKEN_MESSAGE),
      form,
    ),
  );
  return { dispose() {} };
}
