// The shape of a run that compares servers: one warmed-up client per
// implementation of a case, then `runs` rounds in which each implementation
// measures in turn, rotating who goes first so that a noisy minute falls on
// all of them. A client that fails once is not measured again.
import type { ServerSpec } from "./server-spec.ts";
import { specLabel } from "./server-spec.ts";
import type { ServerUnderTest } from "./servers.ts";
import { type Profile, WireClient, withTimeout } from "./wire-client.ts";

/** Time a client gets to open (initialize, streams, session), in milliseconds. */
const OPEN_TIMEOUT_MS = 30_000;

export interface InterleaveOptions<I extends string> {
  impls: readonly I[];
  runs: number;
  /** Case name, for notes. */
  name: string;
  profile: Profile;
  /** The servers `startMany` started, and why the others did not start. */
  started: { servers: Map<string, ServerUnderTest>; failures: Map<string, string> };
  /** The server of each implementation in this case. */
  specs: Record<I, ServerSpec>;
  warm(client: WireClient, impl: I): Promise<unknown>;
  measure(client: WireClient, impl: I, run: number): Promise<void>;
  /** Where failures are noted. */
  notes: string[];
}

export async function interleave<I extends string>(o: InterleaveOptions<I>): Promise<void> {
  const clients = new Map<I, WireClient>();
  try {
    for (const impl of o.impls) {
      const label = specLabel(o.specs[impl]);
      const server = o.started.servers.get(label);
      if (server === undefined) {
        o.notes.push(`${impl}: the server did not start: ${o.started.failures.get(label) ?? "?"}`);
        continue;
      }
      const client = new WireClient({ url: server.url, profile: o.profile });
      try {
        await withTimeout(client.open(), OPEN_TIMEOUT_MS, `${impl} ${o.name} open`);
        await o.warm(client, impl);
        clients.set(impl, client);
      } catch (error) {
        o.notes.push(`${impl}: ${(error as Error).message}`);
        await client.close().catch(() => {});
      }
    }
    for (let run = 0; run < o.runs; run++) {
      for (let k = 0; k < o.impls.length; k++) {
        const impl = o.impls[(run + k) % o.impls.length] as I;
        const client = clients.get(impl);
        if (client === undefined) continue;
        try {
          await o.measure(client, impl, run);
        } catch (error) {
          o.notes.push(`${impl} run ${run + 1}: ${(error as Error).message}`);
          await client.close().catch(() => {});
          clients.delete(impl);
        }
      }
    }
  } finally {
    await Promise.all([...clients.values()].map((client) => client.close().catch(() => {})));
  }
}
