// The folders each person's sessions may use (design: third wave, decision 1).
// The server's own person (OWNER: its plain tokens, its paired devices, the
// editor) may use any folder, as the client names it in session/new. Any
// other person may use only the folders the server grants them
// (`--root NAME=DIR`) or, granted none, one folder of their own below the
// data folder, made on first use. A session's cwd and additionalDirectories
// must lie inside them, compared after symlinks and `..` are resolved
// (common/confine.ts), its MCP servers must be ones reached over the network
// (a stdio one is a command run outside any folder), and the sidecar's own
// host confines that person's fs/* and terminal/* requests to those of the
// session's folders that still lie inside them.
import { mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { PRIVATE_FOLDER_MODE } from "../../common/private-files.ts";
import { ConfinementError, confineExisting, confineNew, isInside, requireAbsolute, resolveRoots, type Folders } from "../../common/confine.ts";
import { ErrorCode, isRecord } from "../../protocol/jsonrpc.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";
import type { SessionRecord } from "../store/shared-store.ts";
import { OWNER, personName } from "./types.ts";

export interface PersonFoldersOptions {
  /** Folders granted to people, by principal id; absolute paths. */
  granted?: ReadonlyMap<string, readonly string[]>;
  /**
   * A person granted none gets a folder of their own below this one, named
   * after them and made on first use. Absent: such a person has no folder,
   * and their session/new is refused.
   */
  homes?: string;
}

/** A person's own folder is one path segment: never `.`, `..` or a hidden name, which could reach out of `homes`. */
const HOME_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

export class PersonFolders {
  readonly #granted: ReadonlyMap<string, readonly string[]>;
  readonly #homes: string | undefined;
  /** Homes made in this run: the common case costs no mkdir. */
  readonly #made = new Set<string>();

  constructor(options: PersonFoldersOptions = {}) {
    this.#granted = options.granted ?? new Map();
    this.#homes = options.homes;
  }

  /** The folders the person may use, resolved (those that exist); undefined for the server's own person, who may use any. */
  async of(principalId: string): Promise<string[] | undefined> {
    if (principalId === OWNER.id) return undefined;
    const granted = this.#granted.get(principalId);
    if (granted !== undefined && granted.length > 0) return resolveRoots(granted);
    const name = personName(principalId);
    if (this.#homes === undefined || !HOME_NAME.test(name)) return [];
    const home = join(this.#homes, name);
    if (!this.#made.has(home)) {
      // Another person's files are theirs: the server's user alone reads them, as the rest of the data folder.
      await mkdir(home, { recursive: true, mode: PRIVATE_FOLDER_MODE });
      this.#made.add(home);
    }
    return resolveRoots([home]);
  }

  /**
   * session/new's params as the agent gets them: the person's cwd (their
   * first folder when the client names none) and additionalDirectories,
   * each an existing folder inside theirs, as real paths; MCP servers the
   * agent reaches over the network only. The server's own person's params
   * pass as they are. Throws RpcFailure(InvalidParams).
   */
  async confineNewSession(principalId: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const roots = await this.#required(principalId);
    if (roots === undefined) return params;
    refuseLocalMcpServers(principalId, params["mcpServers"]);
    const folders = foldersOf(principalId, roots);
    const cwd = params["cwd"] === undefined ? (roots[0] as string) : await confineFolder(params["cwd"], "cwd", folders);
    const extra = params["additionalDirectories"];
    if (extra === undefined) return { ...params, cwd };
    if (!Array.isArray(extra)) throw RpcFailure.invalidParams("additionalDirectories must be an array of absolute paths");
    const additionalDirectories: string[] = [];
    for (const [i, dir] of extra.entries()) additionalDirectories.push(await confineFolder(dir, `additionalDirectories[${i}]`, folders));
    return { ...params, cwd, additionalDirectories };
  }

  /**
   * Refuses to follow (load, resume, attach) or re-create a stored session
   * whose folders are not, or no longer, inside its person's: one made
   * before the server granted what it grants now. Throws RpcFailure(InvalidParams).
   */
  async checkSession(record: SessionRecord): Promise<void> {
    const roots = await this.#required(record.ownerId);
    if (roots === undefined) return;
    const folders = foldersOf(record.ownerId, roots);
    for (const root of record.roots) {
      try {
        // A folder that is gone is judged by where it was: its deepest existing parent.
        await confineNew(root, folders);
      } catch (error) {
        if (error instanceof ConfinementError) throw RpcFailure.invalidParams(`session ${record.id}: ${error.message}`);
        throw error;
      }
    }
  }

  /** What the sidecar's host confines a session's fs/* and terminal/* requests to: its folders that its person may use. */
  async hostRoots(record: SessionRecord): Promise<string[]> {
    const roots = await this.of(record.ownerId);
    if (roots === undefined) return record.roots;
    const own = await resolveRoots(record.roots);
    return own.filter((root) => roots.some((allowed) => isInside(root, allowed)));
  }

  /** The folder a new session of this person starts in unless told otherwise; undefined for the server's own person (the server's default). */
  async defaultCwd(principalId: string): Promise<string | undefined> {
    const roots = await this.of(principalId);
    return roots === undefined ? undefined : (roots[0] ?? "");
  }

  /** The person's folders, refused with the flag that grants one when there is none; undefined for the server's own person. */
  async #required(principalId: string): Promise<string[] | undefined> {
    const roots = await this.of(principalId);
    if (roots !== undefined && roots.length === 0) {
      const name = personName(principalId);
      throw RpcFailure.invalidParams(`${name} has no folder on this server; it grants one with --root ${name}=DIR`);
    }
    return roots;
  }
}

function foldersOf(principalId: string, roots: readonly string[]): Folders {
  const name = personName(principalId);
  return { roots, name: `the folders ${name} may use (${roots.join(", ")}; the server grants more with --root ${name}=DIR)` };
}

/**
 * A stdio MCP server is a command the agent starts on this machine, as the
 * server's user, where no folder confines it: only the server's own person
 * may name one. Servers reached over HTTP or SSE are the person's to choose.
 */
function refuseLocalMcpServers(principalId: string, servers: unknown): void {
  if (servers === undefined) return;
  if (!Array.isArray(servers)) throw RpcFailure.invalidParams("mcpServers must be an array");
  for (const [i, server] of servers.entries()) {
    const type = isRecord(server) ? server["type"] : undefined;
    if (type !== "http" && type !== "sse") {
      throw RpcFailure.invalidParams(`mcpServers[${i}]: ${personName(principalId)} may use MCP servers over http or sse only; a stdio one would run a command on the server`);
    }
  }
}

/** An existing folder inside the person's, as its real path. */
async function confineFolder(value: unknown, field: string, folders: Folders): Promise<string> {
  try {
    const real = await confineExisting(requireAbsolute(value, field), folders);
    if (!(await stat(real)).isDirectory()) throw RpcFailure.invalidParams(`${field}: ${String(value)} is not a folder`);
    return real;
  } catch (error) {
    // A missing folder is a bad parameter here, not a missing resource.
    if (error instanceof ConfinementError) throw new RpcFailure(ErrorCode.InvalidParams, error.message);
    throw error;
  }
}
