// A push service stand-in (RFC 8030) for tests: an HTTPS server on loopback
// that plays the browser vendor's push service and the browser's keys. A
// test makes "browser" subscriptions here (a P-256 key pair and an auth
// secret of their own, RFC 8291), registers them with the server, and reads
// what the server pushed: each message is checked as a real push service and
// browser would check it, or refused:
//   - `Authorization: vapid t=<JWT>, k=<key>` (RFC 8292): the JWT is ES256,
//     signed by `k`, for this service's origin (`aud`), not expired, with a
//     `sub`; `k` must be the key the subscription was made with;
//   - the body is aes128gcm (RFC 8188) encrypted for the subscription's keys
//     (RFC 8291): decrypted here with ECDH P-256 and HKDF, as a browser does.
// A subscription can be told to answer 404 or 410 (gone) instead of 201.
import { createECDH, createDecipheriv, createPublicKey, hkdfSync, randomBytes, verify } from "node:crypto";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { testCert } from "./tls-cert.ts";

export interface PushSubscriptionJson {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** One message the service accepted, decrypted. */
export interface PushedMessage {
  /** The subscription it was sent to. */
  subscription: string;
  payload: unknown;
  ttl: number;
  topic: string | undefined;
  urgency: string | undefined;
  /** The VAPID JWT's claims. */
  claims: { aud: string; exp: number; sub: string };
  /** The VAPID public key that signed it. */
  vapidKey: string;
  /** performance.now() when its body was in. */
  receivedAt: number;
}

interface Browser {
  id: string;
  ecdh: ReturnType<typeof createECDH>;
  auth: Buffer;
  /** The applicationServerKey it subscribed with, when the test says so. */
  applicationServerKey?: string;
  status: number;
}

export interface PushService {
  readonly origin: string;
  /** The certificate to trust it with (an https.Agent's `ca`). */
  readonly ca: string;
  /** A new browser subscription; with `applicationServerKey`, messages signed with another key are refused (403). */
  subscribe(applicationServerKey?: string): PushSubscriptionJson;
  /** From now on the subscription's endpoint answers `status` (404, 410: gone). */
  answer(endpoint: string, status: number): void;
  readonly messages: PushedMessage[];
  /** Messages refused, with why: a test that expects none asserts it is empty. */
  readonly refusals: string[];
  /** Resolves once `count` messages were accepted for `endpoint` (any endpoint when undefined); rejects after `deadlineMs`. */
  waitFor(count: number, endpoint?: string, deadlineMs?: number): Promise<PushedMessage[]>;
  close(): Promise<void>;
}

const b64u = (bytes: Buffer): string => bytes.toString("base64url");

/** RFC 8291 §3.4 and RFC 8188 §2: the plaintext of one aes128gcm body for the browser's keys. */
function decrypt(browser: Browser, body: Buffer): Buffer {
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idlen = body[20]!;
  const serverPublic = body.subarray(21, 21 + idlen);
  const ciphertext = body.subarray(21 + idlen);
  if (idlen !== 65) throw new Error(`keyid is ${idlen} bytes, not an uncompressed P-256 key`);
  if (ciphertext.length > rs) throw new Error("more than one record");
  const secret = browser.ecdh.computeSecret(serverPublic);
  const keyInfo = Buffer.concat([Buffer.from("WebPush: info\0"), browser.ecdh.getPublicKey(), serverPublic]);
  const ikm = Buffer.from(hkdfSync("sha256", secret, browser.auth, keyInfo, 32));
  const cek = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: aes128gcm\0"), 16));
  const nonce = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: nonce\0"), 12));
  const decipher = createDecipheriv("aes-128-gcm", cek, nonce);
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
  const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()]);
  // The last record ends with the delimiter 0x02, then zero padding.
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (padded[end] !== 2) throw new Error("the last record lacks its 0x02 delimiter");
  return padded.subarray(0, end);
}

/** RFC 8292: the claims of a VAPID JWT signed (ES256) by `key`, or why it is refused. */
function verifyVapid(authorization: string | undefined, origin: string): { claims: PushedMessage["claims"]; key: string } | string {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authorization ?? "");
  if (!match) return `Authorization is not "vapid t=…, k=…": ${authorization}`;
  const [, jwt, key] = match as unknown as [string, string, string];
  const [header, payload, signature] = jwt.split(".");
  if (!header || !payload || !signature) return "the JWT has not three parts";
  const point = Buffer.from(key, "base64url");
  if (point.length !== 65 || point[0] !== 4) return "k is not an uncompressed P-256 point";
  const publicKey = createPublicKey({ key: { kty: "EC", crv: "P-256", x: b64u(point.subarray(1, 33)), y: b64u(point.subarray(33)) }, format: "jwk" });
  const signed = verify("sha256", Buffer.from(`${header}.${payload}`), { key: publicKey, dsaEncoding: "ieee-p1363" }, Buffer.from(signature, "base64url"));
  if (!signed) return "the JWT's ES256 signature does not verify with k";
  const alg = (JSON.parse(Buffer.from(header, "base64url").toString()) as { alg?: string }).alg;
  if (alg !== "ES256") return `the JWT's alg is ${alg}`;
  const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as PushedMessage["claims"];
  if (claims.aud !== origin) return `aud ${claims.aud} is not ${origin}`;
  const now = Date.now() / 1000;
  if (!(claims.exp > now && claims.exp <= now + 24 * 3600)) return `exp ${claims.exp} is not within 24 hours`;
  if (typeof claims.sub !== "string" || !/^(mailto:|https:)/.test(claims.sub)) return `sub ${claims.sub} is neither mailto: nor https:`;
  return { claims, key };
}

export async function startPushService(): Promise<PushService> {
  const { cert, key } = await testCert();
  const browsers = new Map<string, Browser>();
  const messages: PushedMessage[] = [];
  const refusals: string[] = [];
  const waiters = new Set<() => void>();
  let next = 0;
  let origin = "";

  const server: Server = createServer({ cert, key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const receivedAt = performance.now();
      const refuse = (status: number, why: string): void => {
        refusals.push(why);
        res.writeHead(status).end(why);
      };
      const browser = browsers.get(req.url?.replace(/^\/push\//, "") ?? "");
      if (req.method !== "POST" || browser === undefined) return refuse(404, `no subscription at ${req.method} ${req.url}`);
      if (browser.status !== 201) {
        res.writeHead(browser.status).end();
        return;
      }
      const vapid = verifyVapid(req.headers.authorization, origin);
      if (typeof vapid === "string") return refuse(401, vapid);
      if (browser.applicationServerKey !== undefined && vapid.key !== browser.applicationServerKey) return refuse(403, "signed with another key than the one the subscription was made with");
      if (req.headers["content-encoding"] !== "aes128gcm") return refuse(415, `Content-Encoding ${req.headers["content-encoding"]}`);
      const ttl = Number(req.headers["ttl"]);
      if (!Number.isInteger(ttl) || ttl < 0) return refuse(400, `TTL ${req.headers["ttl"]}`);
      let payload: unknown;
      try {
        payload = JSON.parse(decrypt(browser, Buffer.concat(chunks)).toString("utf8"));
      } catch (error) {
        return refuse(400, `cannot decrypt: ${(error as Error).message}`);
      }
      const topic = req.headers["topic"];
      const urgency = req.headers["urgency"];
      messages.push({
        subscription: `${origin}/push/${browser.id}`,
        payload,
        ttl,
        topic: typeof topic === "string" ? topic : undefined,
        urgency: typeof urgency === "string" ? urgency : undefined,
        claims: vapid.claims,
        vapidKey: vapid.key,
        receivedAt,
      });
      res.writeHead(201, { location: `${origin}/message/${messages.length}` }).end();
      for (const wake of [...waiters]) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    ca: cert,
    messages,
    refusals,
    subscribe(applicationServerKey) {
      const ecdh = createECDH("prime256v1");
      ecdh.generateKeys();
      const browser: Browser = { id: `b${++next}`, ecdh, auth: randomBytes(16), status: 201, ...(applicationServerKey === undefined ? {} : { applicationServerKey }) };
      browsers.set(browser.id, browser);
      return { endpoint: `${origin}/push/${browser.id}`, keys: { p256dh: b64u(ecdh.getPublicKey()), auth: b64u(browser.auth) } };
    },
    answer(endpoint, status) {
      const browser = browsers.get(endpoint.slice(`${origin}/push/`.length));
      if (browser === undefined) throw new Error(`no subscription ${endpoint}`);
      browser.status = status;
    },
    waitFor(count, endpoint, deadlineMs = 15_000) {
      const of = (): PushedMessage[] => messages.filter((m) => endpoint === undefined || m.subscription === endpoint);
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          if (of().length < count) return false;
          waiters.delete(wake);
          clearTimeout(timer);
          resolve(of());
          return true;
        };
        const wake = (): void => void check();
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`${of().length} of ${count} push messages within ${deadlineMs} ms; refused: ${refusals.join("; ") || "none"}`));
        }, deadlineMs);
        waiters.add(wake);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
