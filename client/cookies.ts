// Cookies of the remote transport (spec: "What the service does", rule 6): the
// client accepts, stores and returns the cookies the server sets, on every later
// request and on the WebSocket upgrade, for the life of the connection. RFC 6265
// matching (domain, path, Secure, expiry) is tough-cookie's.
import { CookieJar as ToughCookieJar } from "tough-cookie";

export class CookieJar {
  #jar = new ToughCookieJar(undefined, { rejectPublicSuffixes: false, looseMode: true });

  /** Stores the `Set-Cookie` values of an answer to a request for `url`. */
  store(url: string | URL, setCookie: string | string[] | undefined): void {
    if (setCookie === undefined) return;
    for (const value of Array.isArray(setCookie) ? setCookie : [setCookie]) {
      // An invalid or foreign cookie is ignored, as a browser would.
      this.#jar.setCookieSync(value, url, { ignoreError: true });
    }
  }

  /** The `Cookie` header value for a request to `url`, or undefined when no cookie applies. */
  header(url: string | URL): string | undefined {
    const value = this.#jar.getCookieStringSync(url);
    return value.length > 0 ? value : undefined;
  }

  /** Forgets every cookie (the connection has ended for good). */
  clear(): void {
    this.#jar.removeAllCookiesSync();
  }
}
