// A cluster behind its balancer for one describe block, and the SDK clients
// its tests connect through the balancer: the cluster starts before the
// block's first test; after its last, the clients close, then the cluster.
import { after, before } from "node:test";
import { connectSdkClient, MemoryAcpCookieStore, type SdkClient, type SdkTransport } from "../cluster/sdk-client.ts";
import { startCluster, type Cluster, type ClusterOptions } from "./cluster.ts";

export interface BalancedCluster {
  /** The running cluster, once the block's tests run. */
  readonly cluster: Cluster;
  /** An SDK client through the balancer, keeping its cookies in `cookies` (a store of its own by default). */
  connect(transport: SdkTransport, cookies?: MemoryAcpCookieStore): SdkClient;
}

/** Registers the hooks in the describe block it is called in. */
export function balancedCluster(options: ClusterOptions = {}): BalancedCluster {
  let started: Cluster | undefined;
  const clients: SdkClient[] = [];
  before(async () => {
    started = await startCluster(options);
  });
  after(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await started?.close();
  });
  const running = (): Cluster => {
    if (started === undefined) throw new Error("the cluster has not started: use it in a test");
    return started;
  };
  return {
    get cluster() {
      return running();
    },
    connect(transport, cookies = new MemoryAcpCookieStore()) {
      const cluster = running();
      const client = connectSdkClient({ baseUrl: cluster.url, token: cluster.token, transport, cookies });
      clients.push(client);
      return client;
    },
  };
}
