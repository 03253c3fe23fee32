// The panel that pairs one device: the pairing link as a QR code (drawn here,
// in the extension host, as an SVG: no network) and as text with a copy
// button. The token is only in this panel's page: never stored, never logged;
// closing the panel forgets it (revoke the device to end its access). When the
// server listens on loopback only, the panel says a phone cannot reach it and
// offers to switch to LAN + TLS.
import QRCode from "qrcode";
import * as vscode from "vscode";
import { ControlRequest, type PairedDevice } from "../../protocol/control.ts";
import type { Ctx } from "../ctx.ts";
import { webviewHtml } from "../panels/webview-html.ts";
import type { PairingFromWebview } from "../webview-messages.ts";
import { switchToLanAndTls } from "./lan-switch.ts";
import { pairingAddress, pairingLink } from "./pairing-address.ts";

const PAIRING_VIEW_TYPE = "acpRemote.pairing";

const CSS = `
  .qr { display: block; width: 256px; height: 256px; margin: 12px 0; image-rendering: pixelated; }
  .link { word-break: break-all; }
  .warning { border-color: var(--vscode-inputValidation-warningBorder); }
`;

export class PairingPanel implements vscode.Disposable {
  readonly #ctx: Ctx;
  #panel: vscode.WebviewPanel | undefined;
  #paired: PairedDevice | undefined;
  #link = "";
  readonly #subscriptions: vscode.Disposable[];

  constructor(ctx: Ctx) {
    this.#ctx = ctx;
    this.#subscriptions = [
      // A restart (the switch to LAN + TLS, a new port) changes the address: the page follows.
      ctx.onDidChangeState((state) => {
        if (state === "running") void this.#render();
      }),
      // Revoked meanwhile (from the tree): the link is dead, the panel goes.
      ctx.onDidChangeStatus((status) => {
        if (status && this.#paired && !status.devices.some((d) => d.deviceId === this.#paired!.device.deviceId)) this.#panel?.dispose();
      }),
    ];
  }

  /** Shows the link of a device paired just now (replacing the one shown before). */
  async show(paired: PairedDevice): Promise<void> {
    this.#paired = paired;
    if (!this.#panel) {
      const panel = vscode.window.createWebviewPanel(PAIRING_VIEW_TYPE, "ACP Remote: Connect a Device", vscode.ViewColumn.Active, {
        enableScripts: true,
        localResourceRoots: [vscode.Uri.joinPath(this.#ctx.extension.extensionUri, "dist", "webview")],
      });
      this.#panel = panel;
      panel.webview.onDidReceiveMessage((m: PairingFromWebview) => void this.#onMessage(m));
      panel.onDidDispose(() => {
        this.#panel = undefined;
        this.#paired = undefined;
        this.#link = "";
      });
    }
    this.#panel.reveal();
    await this.#render();
  }

  async #render(): Promise<void> {
    const panel = this.#panel;
    const paired = this.#paired;
    const server = this.#ctx.server;
    if (!panel || !paired || !server) return;
    const address = await pairingAddress(server, (url) => this.#ctx.client().sendRequest(ControlRequest.addPublicUrl, { url }));
    this.#link = pairingLink(address.url, paired.token);
    const svg = await QRCode.toString(this.#link, { type: "svg", margin: 2, errorCorrectionLevel: "M", color: { dark: "#000000", light: "#ffffff" } });
    panel.webview.html = webviewHtml(panel.webview, this.#ctx.extension.extensionUri, "pairing", "Connect a Device", CSS, {
      data: {
        label: paired.device.label,
        link: this.#link,
        qr: `data:image/svg+xml;base64,${Buffer.from(svg, "utf8").toString("base64")}`,
        reachable: String(address.reachable),
        host: server.host,
      },
    });
  }

  async #onMessage(message: PairingFromWebview): Promise<void> {
    if (message.type === "copyLink" && this.#link !== "") {
      await vscode.env.clipboard.writeText(this.#link);
      void vscode.window.showInformationMessage("ACP Remote: pairing link copied. It holds the device's token: send it only to that device.");
    }
    if (message.type === "useLan") await switchToLanAndTls(this.#ctx);
  }

  dispose(): void {
    this.#panel?.dispose();
    for (const s of this.#subscriptions) s.dispose();
  }
}
