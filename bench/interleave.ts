// The shape of a run that compares servers: one warmed-up contestant per
// entrant of a case (a client of a server under test, or an agent process
// with a bare reader), then `runs` rounds in which each measures in turn,
// rotating who goes first so that a noisy minute falls on all of them. A
// contestant that fails once is not measured again.
import { BareAgentReader } from "./bare-reader.ts";
import type { AgentSpec } from "../protocol/agent-spec.ts";
import type { ServerSpec } from "./server-spec.ts";
import { specLabel } from "./server-spec.ts";
import type { ServerUnderTest } from "./servers.ts";
import { type Profile, type TurnResult, WireClient, withTimeout } from "./wire-client.ts";

/** Time a contestant gets to open (initialize, streams, session), in milliseconds. */
const OPEN_TIMEOUT_MS = 30_000;

/** What a run measures: prompt turns through a server (or straight to an agent). */
export interface Contestant {
  prompt(text: string): Promise<TurnResult>;
  /** The server under test, when there is one (its CPU time is read around a measurement). */
  server?: ServerUnderTest;
  close(): Promise<void>;
}

export interface Entrant<K extends string> {
  key: K;
  open(): Promise<Contestant>;
}

/** The servers `startMany` started, and why the others did not start. */
export interface Started {
  servers: Map<string, ServerUnderTest>;
  failures: Map<string, string>;
}

/** A client of one of the started servers, over `profile`. */
export function serverEntrant<K extends string>(key: K, started: Started, spec: ServerSpec, profile: Profile): Entrant<K> {
  return {
    key,
    async open() {
      const label = specLabel(spec);
      const server = started.servers.get(label);
      if (server === undefined) throw new Error(`the server did not start: ${started.failures.get(label) ?? "?"}`);
      const client = new WireClient({ url: server.url, profile });
      try {
        await client.open();
      } catch (error) {
        await client.close().catch(() => {});
        throw error;
      }
      return { prompt: (text) => client.prompt(text), server, close: () => client.close() };
    },
  };
}

/** An agent process alone, read by a bare line reader (bare-reader.ts). */
export function bareEntrant<K extends string>(key: K, agent: AgentSpec): Entrant<K> {
  return {
    key,
    async open() {
      const reader = new BareAgentReader(agent);
      try {
        await reader.open();
      } catch (error) {
        await reader.close().catch(() => {});
        throw error;
      }
      return { prompt: (text) => reader.prompt(text), close: () => reader.close() };
    },
  };
}

export interface InterleaveOptions<K extends string> {
  entrants: ReadonlyArray<Entrant<K>>;
  runs: number;
  /** Case name, for notes. */
  name: string;
  warm(contestant: Contestant, key: K): Promise<unknown>;
  measure(contestant: Contestant, key: K, run: number): Promise<void>;
  /** Where failures are noted. */
  notes: string[];
}

export async function interleave<K extends string>(o: InterleaveOptions<K>): Promise<void> {
  const open = new Map<K, Contestant>();
  try {
    for (const entrant of o.entrants) {
      try {
        const contestant = await withTimeout(entrant.open(), OPEN_TIMEOUT_MS, `${entrant.key} ${o.name} open`);
        try {
          await o.warm(contestant, entrant.key);
        } catch (error) {
          await contestant.close().catch(() => {});
          throw error;
        }
        open.set(entrant.key, contestant);
      } catch (error) {
        o.notes.push(`${entrant.key}: ${(error as Error).message}`);
      }
    }
    const keys = o.entrants.map((e) => e.key);
    for (let run = 0; run < o.runs; run++) {
      for (let k = 0; k < keys.length; k++) {
        const key = keys[(run + k) % keys.length] as K;
        const contestant = open.get(key);
        if (contestant === undefined) continue;
        try {
          await o.measure(contestant, key, run);
        } catch (error) {
          o.notes.push(`${key} run ${run + 1}: ${(error as Error).message}`);
          await contestant.close().catch(() => {});
          open.delete(key);
        }
      }
    }
  } finally {
    await Promise.all([...open.values()].map((c) => c.close().catch(() => {})));
  }
}
