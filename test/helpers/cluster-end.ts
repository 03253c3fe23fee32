// The end of a test file that ran nodes on a shared store. With
// ACP_REMOTE_CLUSTER_LOGS set, each node's output goes to stderr first, to
// see why a test failed; then the test's own parts end (its clients, a
// proxy), then the store's reader, the nodes and Redis, each if it started.
import type { SharedStore } from "../../sidecar/store/shared-store.ts";
import type { Cluster } from "./cluster.ts";
import type { RedisServer } from "./redis-server.ts";

export interface ClusterParts {
  cluster: Cluster | undefined;
  redis: RedisServer | undefined;
  /** A reader of the shared store the test opened beside the nodes. */
  peek?: SharedStore | undefined;
}

export async function endClusterTest(parts: ClusterParts, endOwnParts: () => Promise<unknown>): Promise<void> {
  if (process.env["ACP_REMOTE_CLUSTER_LOGS"]) for (const node of parts.cluster?.nodes ?? []) process.stderr.write(`--- ${node.id}\n${node.output()}\n`);
  await endOwnParts();
  await parts.peek?.close();
  await parts.cluster?.close();
  await parts.redis?.close();
}
