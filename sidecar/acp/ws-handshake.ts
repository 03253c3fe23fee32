// What a WebSocket opening handshake must carry (RFC 6455, 4.2.1), checked
// before a connection is made: a refusal is then /acp's JSON error like every
// other, and a handshake that cannot succeed costs no connection. These are
// the checks `ws` makes itself before it answers 101; its own refusals are the
// net under them (WsProfile), for whatever it may check beyond these.
import type { IncomingMessage } from "node:http";
import { Errors } from "./errors.ts";

/** RFC 6455, 4.2.1, 5: 16 random bytes in base64. */
const KEY = /^[+/0-9A-Za-z]{22}==$/;
/** The protocol versions `ws` speaks: 13 (RFC 6455) and the draft's 8. */
const VERSIONS: readonly string[] = ["13", "8"];
/** RFC 6455, 4.4: the header that tells a client the versions the server speaks. */
const VERSION_HEADER = "sec-websocket-version";

/** Throws the TransportError a handshake that `ws` would refuse is answered with. */
export function checkHandshake(req: IncomingMessage): void {
  // 1. The method is GET.
  if (req.method !== "GET") throw Errors.methodNotAllowed("GET");
  // 3. `Upgrade` names websocket (Node hands over any upgrade whose Connection says so: h2c, TLS...).
  if (req.headers.upgrade?.toLowerCase() !== "websocket") throw Errors.badHandshake("Upgrade must be websocket");
  // 5. Sec-WebSocket-Key.
  const key = req.headers["sec-websocket-key"];
  if (key === undefined || !KEY.test(key)) throw Errors.badHandshake("Sec-WebSocket-Key must be 16 bytes in base64");
  // 6. Sec-WebSocket-Version, answered with the versions the server speaks.
  const version = req.headers[VERSION_HEADER];
  if (typeof version !== "string" || !VERSIONS.includes(version.trim())) {
    throw Errors.badHandshake("Sec-WebSocket-Version must be 13", { [VERSION_HEADER]: VERSIONS.join(", ") });
  }
}
