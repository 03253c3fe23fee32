// Pairing panel script: draws the link and its QR code from the page's data
// (the panel renders them in the extension host) and asks the panel to copy
// the link or switch the server to LAN + TLS. Listeners only: the CSP forbids
// inline handlers.
import type { PairingFromWebview } from "../webview-messages.ts";
import { el, vscodeApi } from "./lib/vscode-api.ts";

const vscode = vscodeApi<PairingFromWebview>();
const root = document.getElementById("root")!;
const data = root.dataset;
const link = data["link"] ?? "";

root.append(el("h1", {}, `Connect a device: ${data["label"] ?? ""}`));

if (data["reachable"] !== "true") {
  const lan = el("button", { type: "button", id: "pairing-use-lan" }, "Use LAN + TLS…");
  lan.addEventListener("click", () => vscode.postMessage({ type: "useLan" }));
  root.append(
    el(
      "section",
      { class: "card warning", id: "pairing-unreachable", role: "alert" },
      el("h2", {}, "A phone cannot reach this server"),
      el(
        "p",
        {},
        `The server listens on ${data["host"] ?? "loopback"}: only this machine can open the link. Put a tunnel or proxy whose certificate the phone trusts in front of it (Tailscale Serve, Cloudflare Tunnel) and give the server that address (ACP_REMOTE_PUBLIC_URL in the editor's environment; docs/remote-access.md), or, on a network you trust, let it listen there over HTTPS with a self-signed certificate (the phone warns about it, and will not install the app). Then scan the code again.`,
      ),
      lan,
    ),
  );
}

const copy = el("button", { type: "button", id: "pairing-copy" }, "Copy Link");
copy.addEventListener("click", () => vscode.postMessage({ type: "copyLink" }));
root.append(
  el("p", {}, "Scan the code with the device's camera, or send it the link:"),
  el("img", { class: "qr", id: "pairing-qr", src: data["qr"] ?? "", alt: "QR code of the pairing link" }),
  el("pre", { class: "link", id: "pairing-link" }, link),
  copy,
  el(
    "p",
    { class: "muted" },
    "The link holds the device's own token after #, which browsers never send to a server. It is shown once: closing this panel forgets it. Revoke the device from the Overview to end its access; your sessions stay yours.",
  ),
);
