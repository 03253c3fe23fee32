// What `acp-remote serve` tells the person at the terminal once it listens:
// the pairing link (the server URL with the token in the fragment, which
// browsers never send to a server) and its QR code to open it on a phone.
// Behind a proxy or tunnel the link names the public URL (`--public-url`),
// the address the phone can open and whose certificate it trusts.
// Only on a terminal: when stderr goes to a file or a log collector, the token
// must not land there, so only the token file's place is told.
import QRCode from "qrcode";
import { lanUrl } from "../../common/lan-address.ts";
import { isLoopbackHost } from "../../common/loopback.ts";

export interface BannerOptions {
  /** Base URL the server listens on. */
  url: string;
  /** The first public URL (`--public-url`), without a trailing slash: the link names it instead of `url`. */
  publicUrl?: string;
  /** The bound host, to tell whether a phone can reach it. */
  host: string;
  /** The token to pair with; undefined with --no-auth. */
  token: string | undefined;
  /** Where a generated token is kept, if it was generated. */
  tokenFile: string | undefined;
  /** stderr is a terminal. */
  tty: boolean;
}

/** The pairing link: the token rides in the fragment, never in a query string. */
export function pairingLink(url: string, token: string | undefined): string {
  return token === undefined ? `${url}/` : `${url}/#token=${encodeURIComponent(token)}`;
}

export async function pairingBanner(options: BannerOptions): Promise<string> {
  const lines: string[] = [];
  // On every interface the server's URL names loopback: a phone needs the network address.
  const url = options.publicUrl ?? lanUrl(options.url, options.host);
  if (!options.tty) {
    if (options.tokenFile !== undefined) lines.push(`acp-remote: access token kept in ${options.tokenFile} (not printed: stderr is not a terminal)`);
    lines.push(`acp-remote: web client at ${url}/ (pair with ${url}/#token=<token>)`);
    return `${lines.join("\n")}\n`;
  }
  const link = pairingLink(url, options.token);
  if (options.tokenFile !== undefined) lines.push(`acp-remote: access token ${options.token} (kept in ${options.tokenFile})`);
  lines.push(`acp-remote: open on your phone or in a browser: ${link}`);
  lines.push(await QRCode.toString(link, { type: "terminal", small: true }));
  if (options.publicUrl === undefined && isLoopbackHost(options.host)) {
    lines.push(
      `acp-remote: ${options.host} is this machine only: for a phone, put a tunnel or proxy with a certificate it trusts in front and give its address with --public-url (docs/remote-access.md); on a network you trust, --host 0.0.0.0 --tls`,
    );
  }
  return `${lines.join("\n")}\n`;
}
