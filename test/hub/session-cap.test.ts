// The cap on the sessions a person holds (DEFAULT_MAX_SESSIONS_PER_PRINCIPAL):
// taken atomically, per principal, detached sessions included. The hub runs the
// fixture agent as a real process; the test plays the transport.
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { AgentHub } from "../../sidecar/hub/hub.ts";
import { PersonFolders } from "../../sidecar/hub/person-folders.ts";
import type { Principal } from "../../sidecar/hub/types.ts";
import { open } from "../helpers/hub-test-client.ts";
import { startTempHub } from "../helpers/temp-hub.ts";

const FIXTURE = join(import.meta.dirname, "..", "fixtures", "agent.ts");
const CAP = 5;

describe("session cap per principal (DEFAULT_MAX_SESSIONS_PER_PRINCIPAL)", () => {
  let dir: string;
  let hub: AgentHub;
  let close: (() => Promise<void>) | undefined;
  const ALICE: Principal = { id: "alice", label: "alice" };
  const BOB: Principal = { id: "bob", label: "bob" };

  before(async () => {
    ({ dir, hub, close } = await startTempHub("acp-remote-cap-", (dir) => ({
      agents: [{ name: "fixture", command: process.execPath, args: [FIXTURE] }],
      // Alice, Bob and Carol may use the test's folder.
      folders: new PersonFolders({ granted: new Map(["alice", "bob", "carol"].map((id) => [id, [dir]])) }),
      log: () => undefined,
      limits: { maxSessionsPerPrincipal: CAP },
    })));
  });

  after(async () => {
    await close?.();
  });

  test("regression: concurrent session/new all passed the cap checked before the await; now exactly the cap succeeds", async () => {
    const link = await open(hub, ALICE);
    const answers = await Promise.all(Array.from({ length: 20 }, () => link.call("session/new", { cwd: dir, mcpServers: [] })));
    const created = answers.filter((a) => a.error === undefined);
    const refused = answers.filter((a) => a.error !== undefined);
    assert.equal(created.length, CAP);
    assert.equal(refused.length, 20 - CAP);
    for (const r of refused) assert.match(r.error!.message, /at most 5 sessions per person/);
    // The connection drops (no DELETE): its sessions stay, detached and loadable.
    link.connection.detach();
  });

  test("regression: dropping and reconnecting reset a per-connection cap; detached sessions now count for their person", async () => {
    // Alice's five sessions from the case above are detached now (their connection closed).
    const again = await open(hub, ALICE);
    const refused = await again.call("session/new", { cwd: dir, mcpServers: [] });
    assert.match(refused.error?.message ?? "", /at most 5 sessions per person/);
    // Another person is not limited by Alice's sessions.
    const bob = await open(hub, BOB);
    const ok = await bob.call("session/new", { cwd: dir, mcpServers: [] });
    assert.equal(ok.error, undefined);
    // Closing one of Alice's sessions gives its place back.
    const first = hub.status().sessions.find((s) => s.owner === ALICE.label);
    assert.ok(first);
    const loaded = await again.call("session/load", { sessionId: first.sessionId, cwd: dir, mcpServers: [] });
    assert.equal(loaded.error, undefined, "loading a session she holds is not a new session");
    const closed = await again.call("session/close", { sessionId: first.sessionId });
    assert.equal(closed.error, undefined);
    const created = await again.call("session/new", { cwd: dir, mcpServers: [] });
    assert.equal(created.error, undefined);
    again.connection.close();
    bob.connection.close();
  });

  test("a failed session/new gives its reserved place back", async () => {
    const carol: Principal = { id: "carol", label: "carol" };
    const link = await open(hub, carol);
    // A relative cwd is refused by the agent: the reservation must not leak.
    for (let i = 0; i < CAP + 2; i++) {
      const r = await link.call("session/new", { cwd: 42, mcpServers: [] });
      assert.ok(r.error, "the agent refuses a cwd that is not a string");
    }
    const ok = await link.call("session/new", { cwd: dir, mcpServers: [] });
    assert.equal(ok.error, undefined, JSON.stringify(ok.error));
    link.connection.close();
  });
});
