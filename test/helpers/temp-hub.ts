// The hub as its tests run it: over the embedded SQLite store, in a folder of
// its own (which `options` may grant to people or make the default folder),
// the folder removed when it is closed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AgentHub, createHub, type HubOptions } from "../../sidecar/hub/hub.ts";
import { openSqliteStore } from "../../sidecar/store/sqlite/index.ts";

export interface TempHub {
  dir: string;
  hub: AgentHub;
  /** Shuts the hub down, closes its store and removes the folder. */
  close(): Promise<void>;
}

/** `prefix` names the folder in os.tmpdir(). */
export async function startTempHub(prefix: string, options: (dir: string) => Omit<HubOptions, "store">): Promise<TempHub> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const store = openSqliteStore(join(dir, "store.sqlite"));
  const removed = async (): Promise<void> => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  let hub: AgentHub;
  try {
    hub = await createHub({ ...options(dir), store });
  } catch (error) {
    await removed();
    throw error;
  }
  return {
    dir,
    hub,
    async close() {
      await hub.shutdown();
      await removed();
    },
  };
}
