// The API key of the upstream OpenAI-compatible provider (`acpRemote.upstream.url`).
// Like the access token, it lives in the editor's SecretStorage only; the
// sidecar gets it through `acpRemote/upstream/setKey` once it runs.
import type * as vscode from "vscode";

const SECRET_KEY = "acpRemote.upstreamApiKey";

export class UpstreamKeyStore {
  readonly #secrets: vscode.SecretStorage;

  constructor(secrets: vscode.SecretStorage) {
    this.#secrets = secrets;
  }

  async get(): Promise<string | undefined> {
    return (await this.#secrets.get(SECRET_KEY)) || undefined;
  }

  /** Stores the key; an empty one removes it. */
  async set(key: string): Promise<void> {
    if (key.length === 0) await this.#secrets.delete(SECRET_KEY);
    else await this.#secrets.store(SECRET_KEY, key);
  }
}
