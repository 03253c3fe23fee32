// The token of this device. A pairing link carries it in the URL fragment
// (`#token=…`), which browsers never send to a server; the page moves it to
// localStorage at once and drops the fragment from the address bar and the
// history, so it is not left where someone could read it over a shoulder.

const STORAGE_KEY = "acp-remote.token";
const FRAGMENT_PARAM = "token";

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
    return localStorage.getItem(STORAGE_KEY);
  } catch {
    // Storage disabled (private mode in some browsers): the page asks for a link each time.
    return memoryToken;
  }
}

let memoryToken: string | null = null;

export function saveToken(token: string): void {
  memoryToken = token;
  try {
    localStorage.setItem(STORAGE_KEY, token);
  } catch {
    // Kept in memory only.
  }
}

export function forgetToken(): void {
  memoryToken = null;
  try {
    localStorage.removeItem(STORAGE_KEY);
  } catch {
    // Nothing stored.
  }
}
