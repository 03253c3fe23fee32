// session/load and session/attach follow the session and read its history in
// one step: an update the session emits while the store is being read (a
// shared store is a network away) is either in the replay or comes live after
// it, never lost and never twice. The editor's open answers with the journal
// up to the moment the answer leaves, since the editor drops what it is told
// before it. The store here is the embedded one with its
// history read held open until the test has made the session emit an update:
// the same interleaving a slow shared store gives, without relying on timing.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { type AgentHub, createHub } from "../../sidecar/hub/hub.ts";
import { OWNER } from "../../sidecar/hub/types.ts";
import type { SessionStore, SharedStore } from "../../sidecar/store/shared-store.ts";
import { openSqliteStore } from "../../sidecar/store/sqlite/index.ts";
import { type Delivered, newSession, open, prompt, type TestClient } from "../helpers/hub-test-client.ts";

const FIXTURE = join(import.meta.dirname, "..", "fixtures", "agent.ts");
const fixture: AgentSpec = { name: "fixture", command: process.execPath, args: [FIXTURE] };

/** `store` whose next history read of a session first runs `during` (armed by the test). */
function withHeldRead(store: SharedStore): { store: SharedStore; armRead(sessionId: string, during: () => Promise<void>): Promise<void> } {
  let armed: { sessionId: string; during: () => Promise<void>; done: () => void } | undefined;
  const sessions = new Proxy(store.sessions, {
    get(target, property) {
      if (property === "journal") {
        return async (sessionId: string) => {
          const hold = armed?.sessionId === sessionId ? armed : undefined;
          if (hold) {
            armed = undefined;
            await hold.during();
            hold.done();
          }
          return target.journal(sessionId);
        };
      }
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as SessionStore;
  const held = new Proxy(store, {
    get(target, property) {
      if (property === "sessions") return sessions;
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    store: held,
    armRead: (sessionId, during) => new Promise<void>((done) => (armed = { sessionId, during, done })),
  };
}

const isModeUpdate = (sessionId: string) => (d: Delivered) =>
  "method" in d.message && d.message.method === "session/update" && d.stream === sessionId && (d.message.params as { update: { sessionUpdate: string } }).update.sessionUpdate === "current_mode_update";
const isAgentText = (sessionId: string, text: string) => (d: Delivered) =>
  "method" in d.message &&
  d.message.method === "session/update" &&
  d.stream === sessionId &&
  (d.message.params as { update: { sessionUpdate: string; content?: { text?: string } } }).update.content?.text === text;
const isResponse = (d: Delivered) => !("method" in d.message);

describe("following a session while its history is read", () => {
  let dir: string;
  let inner: SharedStore;
  let hub: AgentHub;
  let armRead: ReturnType<typeof withHeldRead>["armRead"];
  const clients: TestClient[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "acp-remote-follow-"));
    inner = openSqliteStore(join(dir, "store.sqlite"));
    const held = withHeldRead(inner);
    armRead = held.armRead;
    hub = await createHub({ agents: [fixture], store: held.store, log: () => undefined });
  });

  after(async () => {
    for (const client of clients) client.connection.close();
    await hub.shutdown();
    await inner.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const method of ["session/load", "session/attach"] as const) {
    test(`${method}: an update sent while the history is read reaches the client once, after the replay and before the answer`, async () => {
      const a = await open(hub, OWNER);
      clients.push(a);
      const sessionId = await newSession(a, dir);
      await a.call("session/prompt", prompt(sessionId, "echo in the history"));
      // While the store reads the history, the session's mode changes (the editor sets it): one update to its followers.
      const read = armRead(sessionId, () => hub.setMode({ sessionId, modeId: "code" }).then(() => undefined));
      const b = await open(hub, OWNER);
      clients.push(b);
      const answer = await b.call(method, { sessionId, cwd: dir, mcpServers: [] });
      await read;
      assert.equal(answer.error, undefined, JSON.stringify(answer.error));

      const delivered = b.delivered;
      const modeUpdates = delivered.filter(isModeUpdate(sessionId));
      assert.equal(modeUpdates.length, 1, "the update sent during the read reaches the client exactly once");
      const replayed = delivered.findIndex(isAgentText(sessionId, "in the history"));
      const live = delivered.findIndex(isModeUpdate(sessionId));
      const answered = delivered.findIndex(isResponse);
      assert.ok(replayed !== -1, "the history is replayed");
      assert.ok(replayed < live && live < answered, `replay (${replayed}), then the live update (${live}), then the answer (${answered})`);
      // session/load took the session from the first client (it follows no more); session/attach joined it.
      assert.equal(a.delivered.filter(isModeUpdate(sessionId)).length, method === "session/attach" ? 1 : 0);

      // The journal has it once: a later load replays it once.
      const c = await open(hub, OWNER);
      clients.push(c);
      await c.call("session/load", { sessionId, cwd: dir, mcpServers: [] });
      assert.equal(c.delivered.filter(isModeUpdate(sessionId)).length, 1);
    });
  }

  test("the editor's open: an update journaled while the history is read is in the answer, since the editor drops what it is told before the answer", async () => {
    const opened = await hub.newSession({ cwd: dir });
    const sessionId = opened.sessionId;
    await hub.prompt({ sessionId, prompt: [{ type: "text", text: "echo in the history" }] });
    // As the session tab does: what it is told before the answer is dropped, what comes after is drawn.
    let answered = false;
    const toldAfter: string[] = [];
    const off = hub.onSessionUpdate((n) => {
      if (answered && n.sessionId === sessionId) toldAfter.push(n.update.sessionUpdate);
    });
    try {
      const read = armRead(sessionId, () => hub.setMode({ sessionId, modeId: "code" }).then(() => undefined));
      const reopened = await hub.openSession(sessionId);
      answered = true;
      await read;
      const inAnswer = reopened.updates.filter((n) => n.update.sessionUpdate === "current_mode_update").length;
      assert.equal(inAnswer + toldAfter.filter((kind) => kind === "current_mode_update").length, 1, "the update is drawn exactly once");
      assert.equal(inAnswer, 1, "it was journaled before the answer left, so it is in the answer");
    } finally {
      off();
    }
  });
});
