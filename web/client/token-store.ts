// The token of this device. A pairing link carries it in the URL fragment
// (`#token=…`), which browsers never send to a server; the page moves it to
// localStorage at once and drops the fragment from the address bar and the
// history, so it is not left where someone could read it over a shoulder.
//
// Storage belongs to the origin, which several servers may share behind one
// proxy (code-server's /proxy/8765/ and /proxy/8766/): the token of a page
// under a path prefix is kept under a key naming that prefix.
import { pageBase } from "./endpoint.ts";

/** The key of a page at the root; a page under a prefix adds it (`acp-remote.token:/acp-remote/`). */
const STORAGE_KEY = "acp-remote.token";
const FRAGMENT_PARAM = "token";

function storageKey(): string {
  const path = new URL(pageBase()).pathname;
  return path === "/" ? STORAGE_KEY : `${STORAGE_KEY}:${path}`;
}

/** The token of a pairing link (or a bare `#token=…` fragment), or undefined. */
export function tokenFromLink(link: string): string | undefined {
  const hash = link.includes("#") ? link.slice(link.indexOf("#") + 1) : "";
  const token = new URLSearchParams(hash).get(FRAGMENT_PARAM)?.trim();
  return token ? token : undefined;
}

/** Takes a token out of the page's fragment into storage; true when there was one. */
export function adoptFragmentToken(): boolean {
  const token = tokenFromLink(location.href);
  if (token === undefined) return false;
  saveToken(token);
  history.replaceState(null, "", location.pathname);
  return true;
}

export function storedToken(): string | null {
  try {
    return localStorage.getItem(storageKey());
  } catch {
    // Storage disabled (private mode in some browsers): the page asks for a link each time.
    return memoryToken;
  }
}

let memoryToken: string | null = null;

export function saveToken(token: string): void {
  memoryToken = token;
  try {
    localStorage.setItem(storageKey(), token);
  } catch {
    // Kept in memory only.
  }
}

export function forgetToken(): void {
  memoryToken = null;
  try {
    localStorage.removeItem(storageKey());
  } catch {
    // Nothing stored.
  }
}
