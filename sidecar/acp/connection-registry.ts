// Transport connections by id, for both profiles. It enforces the connection
// bound (503 past it) and the idle rule: a Streamable HTTP connection with no
// open stream and no request in progress for `connectionIdleMs` has lost its
// client, and detaches (design: decision 3), like a dropped WebSocket.
import type { Principal } from "../hub/types.ts";
import { Errors } from "./errors.ts";

export interface TransportConnection {
  readonly connectionId: string;
  readonly principal: Principal;
  /** True when nothing holds the connection open (no stream, no request): the idle timer runs. */
  isIdle(): boolean;
  /** The client is gone (idle timeout, socket closed, server shutdown): sessions detach and stay loadable. */
  detach(): void;
  /** Its credential was revoked: as detach, and the client is told why, so it stops retrying with it. */
  revoke(): void;
}

interface Entry<C> {
  connection: C;
  idleTimer: NodeJS.Timeout | undefined;
}

export class ConnectionRegistry<C extends TransportConnection = TransportConnection> {
  readonly #entries = new Map<string, Entry<C>>();
  readonly #maxConnections: number;
  readonly #idleMs: number;

  constructor(options: { maxConnections: number; connectionIdleMs: number }) {
    this.#maxConnections = options.maxConnections;
    this.#idleMs = options.connectionIdleMs;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Throws the 503 when no connection can be added. */
  assertRoom(): void {
    if (this.#entries.size >= this.#maxConnections) throw Errors.tooManyConnections();
  }

  add(connection: C): void {
    this.assertRoom();
    this.#entries.set(connection.connectionId, { connection, idleTimer: undefined });
    this.touch(connection);
  }

  /**
   * The connection with this id, if it exists and belongs to `principal`. A
   * connection of another principal is not told apart from an unknown one.
   */
  get(connectionId: string, principal: Principal): C | undefined {
    const entry = this.#entries.get(connectionId);
    return entry !== undefined && entry.connection.principal.id === principal.id ? entry.connection : undefined;
  }

  remove(connection: C): void {
    const entry = this.#entries.get(connection.connectionId);
    if (entry === undefined || entry.connection !== connection) return;
    clearTimeout(entry.idleTimer);
    this.#entries.delete(connection.connectionId);
  }

  /** Re-evaluates the idle timer after activity or a change of open streams. */
  touch(connection: C): void {
    const entry = this.#entries.get(connection.connectionId);
    if (entry === undefined || entry.connection !== connection) return;
    clearTimeout(entry.idleTimer);
    entry.idleTimer = undefined;
    if (!connection.isIdle()) return;
    entry.idleTimer = setTimeout(() => {
      if (this.#entries.get(connection.connectionId) !== entry || !connection.isIdle()) return;
      this.remove(connection);
      connection.detach();
    }, this.#idleMs);
    entry.idleTimer.unref();
  }

  /** Removes every connection, for shutdown. */
  drain(): C[] {
    const connections = [...this.#entries.values()].map((e) => e.connection);
    for (const connection of connections) this.remove(connection);
    return connections;
  }

  /** Removes the connections made with a paired device's token (it was revoked); the caller detaches them. */
  takeDevice(deviceId: string): C[] {
    const connections = [...this.#entries.values()].map((e) => e.connection).filter((c) => c.principal.deviceId === deviceId);
    for (const connection of connections) this.remove(connection);
    return connections;
  }
}
