// The hub as the transport sees it on a node of several (shared store): each
// connection is the local hub's, wrapped so that sessions whose home is a
// live other node are reached through that node (routed-connection.ts).
import type { ClientLink, ConnectionHub, ConnectOptions, HubConnection } from "../hub/types.ts";
import { type ClusterDeps, RoutedConnection } from "./routed-connection.ts";

export class ClusterHub implements ConnectionHub {
  readonly #local: ConnectionHub;
  readonly #deps: ClusterDeps;

  constructor(local: ConnectionHub, deps: ClusterDeps) {
    this.#local = local;
    this.#deps = deps;
  }

  connect(link: ClientLink, options: ConnectOptions = {}): HubConnection {
    return new RoutedConnection(this.#local.connect(link, options), link, options, this.#deps);
  }
}
