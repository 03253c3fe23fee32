// The addresses people use to reach the server when a TLS-terminating proxy or
// tunnel stands in front of it: `--public-url`, and what the editor's
// asExternalUri made of the server's own URL. The public URL is configuration,
// not a guess (design, third wave, decision 2): nothing here is read from a
// request's X-Forwarded-* headers, which anyone can send.
//
// Each public URL may have a path prefix (`https://box.example/acp-remote`).
// The front door lets the Host and Origin of each one in, and nothing more;
// it takes the prefix off a request that a proxy passed on with it (nginx
// `proxy_pass http://127.0.0.1:8765;`), while a proxy that strips it
// (`proxy_pass http://127.0.0.1:8765/;`, code-server's /proxy/PORT/) sends the
// bare path, which is served as it is. The pairing link names the first.
import { DEFAULT_MAX_PUBLIC_URLS, DEFAULT_PUBLIC_URL_MAX_CHARS } from "../limits.ts";

export interface PublicUrl {
  /** `https://box.example/acp-remote`, without a trailing slash: the page is at `${url}/`, the endpoint at `${url}/acp`. */
  readonly url: string;
  /** `https://box.example`: what a page at the URL sends as its Origin. */
  readonly origin: string;
  /** `box.example`, lower case: the Host name a proxy passes on (with the port or without). */
  readonly hostname: string;
  /** `/acp-remote`, or "" when the server is at the root. */
  readonly prefix: string;
}

/** A public URL that cannot be used, with the reason. */
export class PublicUrlError extends Error {
  override name = "PublicUrlError";
}

/**
 * A path prefix of segments that are spelled the same way by every proxy: no
 * empty segment and no character a proxy might encode or decode on the way,
 * since the prefix is compared with request paths as they arrive.
 */
const PREFIX = /^(?:\/[A-Za-z0-9._~!$&'()*+,;=:@-]+)*$/;

/** Parses one public URL; throws PublicUrlError saying what is wrong with it. */
export function parsePublicUrl(text: string): PublicUrl {
  const given = text.trim();
  if (given.length > DEFAULT_PUBLIC_URL_MAX_CHARS) throw new PublicUrlError(`longer than ${DEFAULT_PUBLIC_URL_MAX_CHARS} characters`);
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new PublicUrlError(`"${given}" is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new PublicUrlError(`"${given}" is not an http(s) URL`);
  if (url.username !== "" || url.password !== "") throw new PublicUrlError(`"${given}" carries a user name or password`);
  if (/[?#]/.test(given)) throw new PublicUrlError(`"${given}" has a query or a fragment: give the address the page is at, e.g. https://box.example/acp-remote`);
  const prefix = url.pathname.replace(/\/+$/, "");
  if (!PREFIX.test(prefix)) throw new PublicUrlError(`"${given}": its path ${url.pathname} has empty segments or characters a proxy may spell otherwise (letters, digits and ._~-!$&'()*+,;=:@ only)`);
  return { url: `${url.origin}${prefix}`, origin: url.origin, hostname: url.hostname.toLowerCase(), prefix };
}

/** The Origin form of a header value (`https://box.example`), or undefined when it is none. */
function originOf(value: string): string | undefined {
  try {
    const origin = new URL(value).origin;
    return origin === "null" ? undefined : origin;
  } catch {
    return undefined;
  }
}

/** A request target inside the server, once a public prefix is taken off. */
export interface LocalTarget {
  /** The target without the prefix: `/acp?agent=x`; "" or `?…` when the request named the prefix itself. */
  target: string;
  /** The prefix taken off. */
  prefix: string;
}

/** The public URLs of one server: given at the start, and added while it runs (the editor's asExternalUri). */
export class PublicUrls {
  readonly #urls: PublicUrl[] = [];
  readonly #max: number;
  #check: (url: PublicUrl) => string | undefined = () => undefined;

  constructor(urls: readonly string[] = [], max = DEFAULT_MAX_PUBLIC_URLS) {
    this.#max = max;
    for (const url of urls) this.add(url);
  }

  /**
   * Adds a public URL (nothing changes when it is there already) and returns
   * it parsed. Throws PublicUrlError when it is not one, when the guard
   * refuses it, or when `max` are there already.
   */
  add(text: string): PublicUrl {
    const url = parsePublicUrl(text);
    const known = this.#urls.find((u) => u.url === url.url);
    if (known !== undefined) return known;
    const refusal = this.#check(url);
    if (refusal !== undefined) throw new PublicUrlError(`"${url.url}": ${refusal}`);
    if (this.#urls.length >= this.#max) throw new PublicUrlError(`already ${this.#max} public URLs (DEFAULT_MAX_PUBLIC_URLS)`);
    this.#urls.push(url);
    return url;
  }

  /**
   * From now on, `add` refuses a URL that `check` names a reason against;
   * the ones already here are checked at once (the first refused throws).
   */
  guard(check: (url: PublicUrl) => string | undefined): void {
    for (const url of this.#urls) {
      const refusal = check(url);
      if (refusal !== undefined) throw new PublicUrlError(`"${url.url}": ${refusal}`);
    }
    this.#check = check;
  }

  list(): readonly PublicUrl[] {
    return this.#urls;
  }

  /** The one the pairing link names: the first given. */
  first(): PublicUrl | undefined {
    return this.#urls[0];
  }

  /** Whether an Origin header names the origin of a public URL (`https://box.example`; default ports and case do not matter). */
  hasOrigin(origin: string): boolean {
    const normalized = originOf(origin);
    return normalized !== undefined && this.#urls.some((u) => u.origin === normalized);
  }

  /** Whether a Host name (without its port) is the host of a public URL. */
  hasHostname(hostname: string): boolean {
    const name = hostname.toLowerCase();
    return this.#urls.some((u) => u.hostname === name);
  }

  /**
   * The target of a request a proxy passed on with a public prefix, without
   * it; undefined when the target is under no prefix (the proxy stripped it,
   * or the request came straight to the server). The longest prefix wins.
   */
  local(target: string): LocalTarget | undefined {
    let found: string | undefined;
    for (const { prefix } of this.#urls) {
      if (prefix === "" || (found !== undefined && found.length >= prefix.length)) continue;
      const rest = target.slice(prefix.length);
      if (target.startsWith(prefix) && (rest === "" || rest.startsWith("/") || rest.startsWith("?"))) found = prefix;
    }
    return found === undefined ? undefined : { target: target.slice(found.length), prefix: found };
  }
}
