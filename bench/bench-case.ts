// The cases of a suite: one a client profile, each with the servers measured
// through it by key. The profile decides how every server listens: the
// baselines (raw Node, the SDK's server and bridge) on their own listener for
// that protocol, ours on its one-port cleartext listener, and both over TLS
// for h2.
import type { ServerSpec } from "./server-spec.ts";
import { Profile } from "./wire-client.ts";

export type Listen = ServerSpec["listen"];

export interface BenchCase<K extends string> {
  name: string;
  profile: Profile;
  servers: Record<K, ServerSpec>;
}

/** Where each profile finds the servers: the baselines' listener and ours. */
const LISTENERS: Record<Profile, { baseline: Listen; ours: Listen }> = {
  [Profile.H2c]: { baseline: "h2c", ours: "clear" },
  [Profile.H2]: { baseline: "tls", ours: "tls" },
  [Profile.Http1]: { baseline: "http1", ours: "clear" },
  [Profile.Ws]: { baseline: "http1", ours: "clear" },
};

/** One case per profile named in `names`, in that order, each with the servers `servers` makes for the profile's listeners. */
export function benchCases<K extends string>(names: Partial<Record<Profile, string>>, servers: (baseline: Listen, ours: Listen) => Record<K, ServerSpec>): ReadonlyArray<BenchCase<K>> {
  return (Object.entries(names) as Array<[Profile, string]>).map(([profile, name]) => ({ name, profile, servers: servers(LISTENERS[profile].baseline, LISTENERS[profile].ours) }));
}
