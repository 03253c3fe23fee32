// Options of `acp-remote serve`, as the CLI, the control server and tests pass them.
import { homedir } from "node:os";
import { join } from "node:path";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import type { Agent } from "node:https";
import type { NamedToken } from "../http/auth.ts";
import type { Log } from "../../protocol/log-line.ts";
import type { TlsOption } from "../http/tls.ts";

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 8765;
/** The folder of the data folder where each labelled person granted no `--root` gets a folder of their own. */
export const PEOPLE_DIR = "people";

export interface ServeOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Configured agents, the default first; empty runs the embedded demo agent. */
  agents: AgentSpec[];
  /**
   * Accepted bearer tokens; empty with `auth` on generates one. A plain token
   * is the server's person (OWNER); a labelled one (`--token NAME:TOKEN`) is
   * a person of its own, with its own sessions and jobs.
   */
  tokens: Array<string | NamedToken>;
  /**
   * Folders other people's sessions may use (`--root NAME=DIR`), absolute.
   * A labelled person granted none works in a folder of their own below the
   * data folder (PEOPLE_DIR); the server's own person may use any folder.
   */
  roots?: Array<{ person: string; dir: string }>;
  /** False only with a loopback host (`--no-auth`). */
  auth: boolean;
  /** TLS: files, or a self-signed certificate kept in the data folder. */
  tls?: TlsOption;
  dataDir: string;
  /** Origins allowed besides the server's own and, on loopback, loopback origins. */
  allowedOrigins: string[];
  /**
   * The addresses people use when a TLS-terminating proxy or tunnel stands in
   * front (`--public-url`, env ACP_REMOTE_PUBLIC_URL), each with an optional
   * path prefix: the pairing link names the first; the Host and Origin checks
   * accept each; the web client and /acp are served under each prefix.
   */
  publicUrls?: string[];
  /** Upstream OpenAI-compatible provider for /v1. */
  upstream?: { url: string; apiKey?: string };
  /** Serve the web client at `/` (default true; `--no-web` turns it off). */
  web?: boolean;
  /** The built web client it serves (dist/web/client beside the CLI by default; an embedder or a test may build one elsewhere). */
  webDir?: string;
  /**
   * A shared store, `redis://HOST:PORT/DB`, for several sidecars behind one
   * address; absent, the embedded SQLite file in the data folder.
   */
  store?: string;
  /** This sidecar's name among the nodes of a shared store (default HOSTNAME-PORT). */
  nodeId?: string;
  /** Where the other nodes reach this one's /acp (default: its own URL). */
  advertiseUrl?: string;
  /**
   * The secret the nodes of a shared store share (env ACP_REMOTE_NODE_SECRET,
   * or `--node-secret-file`): a link from one node to another speaks for a
   * person with a claim signed with it. Required with `store`; never stored.
   */
  nodeSecret?: string;
  /** PEM certificates the other nodes' TLS certificates must chain to (`--node-ca FILE`); the system's CAs when absent. */
  nodeCa?: string;
  /** PEM certificates the shared store's TLS certificate must chain to (`--store-ca FILE`, for `rediss://`); the system's CAs when absent. */
  storeCa?: string;
  /**
   * Notifications: Web Push to paired devices is always on (nothing is sent
   * until a device subscribes); `ntfy` adds an ntfy topic, `ntfy:URL/TOPIC`
   * (`--notify`), with its server's token (env ACP_REMOTE_NTFY_TOKEN).
   * `pushAgent` is the HTTPS agent push services are reached with (Node's
   * global one by default; an embedder may trust a private CA with it).
   */
  notify?: { ntfy?: string; ntfyToken?: string; pushAgent?: Agent };
  /** Where the sidecar writes its log lines (stderr by default). */
  log?: Log;
  /** Who started the server: an editor (`--control stdio`) or a person at a terminal (the default). The demo agent's advice follows it. */
  hostedBy?: "editor" | "terminal";
}

/** The user's data folder for acp-remote (XDG on Linux, the usual places elsewhere). */
export function defaultDataDir(): string {
  if (process.env["ACP_REMOTE_DATA_DIR"]) return process.env["ACP_REMOTE_DATA_DIR"];
  if (process.platform === "win32") return join(process.env["LOCALAPPDATA"] ?? join(homedir(), "AppData", "Local"), "acp-remote");
  if (process.platform === "darwin") return join(homedir(), "Library", "Application Support", "acp-remote");
  return join(process.env["XDG_DATA_HOME"] ?? join(homedir(), ".local", "share"), "acp-remote");
}
