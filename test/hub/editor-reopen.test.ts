// The editor's view of a session across a restart of the sidecar: the hub
// and a real agent process (the fixture over stdio), stopped and created
// again on the same store, as a window reload or Restart Server does.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import type { OpenedSession, SessionStateEvent } from "../../protocol/control.ts";
import { type AgentHub, createHub } from "../../sidecar/hub/hub.ts";
import { OWNER } from "../../sidecar/hub/types.ts";
import { openSqliteStore } from "../../sidecar/store/sqlite/index.ts";
import type { SharedStore } from "../../sidecar/store/shared-store.ts";
import { open } from "../helpers/hub-test-client.ts";

const FIXTURE = join(import.meta.dirname, "..", "fixtures", "agent.ts");
const fixture: AgentSpec = { name: "fixture", command: process.execPath, args: [FIXTURE] };
const WAIT_MS = 20_000;

async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a session opened in the editor after a restart of the sidecar", () => {
  let dir: string;
  let file: string;
  let store: SharedStore | undefined;
  let hub: AgentHub | undefined;

  /** A hub on the test's store, as a sidecar (re)started on the same data folder. */
  async function start(): Promise<AgentHub> {
    await hub?.shutdown();
    await store?.close();
    store = openSqliteStore(file);
    hub = await createHub({ agents: [fixture], store, log: () => undefined });
    return hub;
  }

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "acp-remote-editor-reopen-"));
    file = join(dir, "store.sqlite");
  });

  after(async () => {
    await hub?.shutdown();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test("regression: after a restart the editor's tab opened without the session's modes (a phone's session/load had them)", async () => {
    let first = await start();
    const created = await first.newSession({ cwd: dir });
    assert.ok(created.modes, "the fixture offers modes");
    first = await start();
    // Once the agent runs, the answer holds the modes the agent offers again.
    await until("the agent to run", () => (first.status().agents[0]?.state === "running" ? true : undefined));
    const opened = await first.openSession(created.sessionId);
    assert.deepEqual(opened.modes?.availableModes.map((m) => m.id), ["ask", "code"]);
    // A phone loading the same session sees the same modes.
    const phone = await open(first, OWNER);
    const { response } = await phone.request("session/load", { sessionId: created.sessionId, cwd: dir, mcpServers: [] });
    assert.deepEqual((response.result as Pick<OpenedSession, "modes">).modes, opened.modes);
    phone.connection.close();
  });

  test("regression: opened while the agent still started, the tab never learnt the modes; they follow as a state event", async () => {
    let hub = await start();
    const created = await hub.newSession({ cwd: dir });
    hub = await start();
    const states: SessionStateEvent[] = [];
    hub.onSessionState((event) => {
      if (event.sessionId === created.sessionId) states.push(event);
    });
    const opened = await hub.openSession(created.sessionId);
    const modes = opened.modes ?? (await until("the session's state", () => states.find((s) => s.modes !== null)))?.modes;
    assert.deepEqual(modes?.availableModes.map((m) => m.id), ["ask", "code"]);
  });
});
