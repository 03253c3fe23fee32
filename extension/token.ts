// The access token remote clients present (`Authorization: Bearer`). It lives
// in the editor's SecretStorage only: never in settings, never in a log line.
// The sidecar receives it in `initialize` at each start (never in its
// environment, which its agents would inherit) and through
// `acpRemote/auth/setTokens` when it is rotated.
import { randomBytes } from "node:crypto";
import type * as vscode from "vscode";

const SECRET_KEY = "acpRemote.accessToken";
/** 32 random bytes: 256 bits, base64url (43 characters). */
const TOKEN_BYTES = 32;

function newToken(): string {
  return randomBytes(TOKEN_BYTES).toString("base64url");
}

export class TokenStore {
  readonly #secrets: vscode.SecretStorage;

  constructor(secrets: vscode.SecretStorage) {
    this.#secrets = secrets;
  }

  /** The stored token; one is created on first use. */
  async get(): Promise<string> {
    const existing = await this.#secrets.get(SECRET_KEY);
    if (existing) return existing;
    const token = newToken();
    await this.#secrets.store(SECRET_KEY, token);
    return token;
  }

  /** Stores and returns a fresh token; the old one stops working once the sidecar is told. */
  async rotate(): Promise<string> {
    const token = newToken();
    await this.#secrets.store(SECRET_KEY, token);
    return token;
  }
}
