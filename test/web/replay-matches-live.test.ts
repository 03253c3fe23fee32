// A replay looks like the live view (design: third wave, decision 4). The real
// sidecar and the fixture agent run two turns: the first cancelled before the
// agent said anything, the second with a permission request answered between
// two agent messages. What the prompting client received live is drawn by the
// session view as the web client draws it (its own prompt echoed, the
// permission answered with the card's button, each turn ended by the prompt's
// answer); a second client's session/load (the SDK's client, which checks each
// notification against the schema) and the editor's open are drawn from their
// replay alone. The three transcripts must be the same.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { client, methods, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import type { ClientConnection, RequestPermissionRequest, SessionNotification, StopReason } from "@agentclientprotocol/sdk";
import type { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import type { Page } from "playwright-core";
import WebSocket from "ws";
import { type HistoryMark, markUpdate, readMark } from "../../protocol/history.ts";
import { serveFixture, type ServedFixture } from "../helpers/sidecar-server.ts";
import { markup } from "../helpers/transcript-markup.ts";
import { PERMISSION, SESSION_ID } from "./fixtures.ts";
import { call, feed, openViewPage, type ViewPage } from "./page.ts";

const TOKEN = "replay-matches-live-token-0123456789";
const ANSWER = "allow_once";

/** What the prompting client went through, in order. */
type LiveEvent =
  | { prompt: string }
  | { update: SessionNotification }
  | { permission: RequestPermissionRequest }
  | { turnEnded: StopReason };

interface SdkClient {
  connection: ClientConnection;
  updates: SessionNotification[];
}

function connect(url: string, live: LiveEvent[] | undefined): SdkClient {
  const updates: SessionNotification[] = [];
  const app = client({ name: "replay-matches-live" })
    .onNotification(methods.client.session.update, ({ params }: { params: SessionNotification }) => {
      updates.push(params);
      live?.push({ update: params });
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      live?.push({ permission: params });
      return { outcome: { outcome: "selected", optionId: ANSWER } };
    });
  const stream = createWebSocketStream(url, { WebSocket, headers: { authorization: `Bearer ${TOKEN}` } });
  return { connection: app.connect(stream as ReturnType<typeof createHttpStream>), updates };
}

/** Draws what the prompting client received as the web client's session screen does. */
async function drawLive(page: Page, sessionId: string, events: LiveEvent[]): Promise<void> {
  let requests = 0;
  for (const event of events) {
    if ("prompt" in event) {
      // The page shows its own prompt (the server does not echo it to the sender) and the turn as running.
      await feed(page, [{ sessionId, update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: event.prompt } } }]);
      await call(page, "turnStarted");
    } else if ("update" in event) {
      await feed(page, [event.update]);
    } else if ("permission" in event) {
      const id = `live-${++requests}`;
      await call(page, "permissionRequested", id, event.permission);
      await page.locator(`.sv-perm[data-request-id="${id}"] button[data-option-id="${ANSWER}"]`).click();
    } else {
      await call(page, "turnEnded", event.turnEnded);
    }
  }
}

/** The transcript's blocks as a person reads them: kind and text. */
function blocks(page: Page): Promise<string[]> {
  return page.locator(".sv-transcript").evaluate((t) =>
    Array.from(t.children).map((c) => {
      const text = (selector: string) => (c.querySelector(selector)?.textContent ?? "").replace(/\s+/g, " ").trim();
      if (c.classList.contains("sv-user")) return `You: ${text(".sv-body")}`;
      if (c.classList.contains("sv-agent")) return `Agent: ${text(".sv-body")}`;
      if (c.classList.contains("sv-perm")) return `Permission: ${text(".sv-perm-title")} → ${text(".sv-perm-outcome")}`;
      return `${c.className}: ${(c.textContent ?? "").trim()}`;
    }),
  );
}

describe("a replayed session looks like the live one", () => {
  let served: ServedFixture;
  let vp: ViewPage;
  const clients: SdkClient[] = [];
  const pages: Page[] = [];

  before(async () => {
    served = await serveFixture({ tokens: [TOKEN] });
    vp = await openViewPage();
  });

  after(async () => {
    for (const c of clients) {
      c.connection.close();
      await c.connection.closed.catch(() => undefined);
    }
    for (const page of pages) await page.close().catch(() => undefined);
    await vp?.close();
    await served?.close();
  });

  test("two prompts of separate turns, the cancelled turn's end and an answered permission card replay as they showed live (session/load and the editor's open)", async () => {
    const url = `ws://127.0.0.1:${served.server.port}/acp`;
    const hub = served.server.hub;
    const live: LiveEvent[] = [];
    const a = connect(url, live);
    clients.push(a);
    await a.connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await a.connection.agent.request(methods.agent.session.new, { cwd: served.dataDir, mcpServers: [] });

    // Turn 1: cancelled once the agent has it, before it says anything.
    const first = "slow 60000";
    const started = new Promise<void>((resolve) => {
      const off = hub.onTurn((e) => {
        if (e.sessionId === sessionId && e.state === "started") {
          off();
          resolve();
        }
      });
    });
    live.push({ prompt: first });
    const turn1 = a.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: first }] });
    await started;
    await a.connection.agent.notify(methods.agent.session.cancel, { sessionId });
    live.push({ turnEnded: (await turn1).stopReason });

    // Turn 2: an agent message, a permission request answered, another agent message.
    const second = "echo before\nask Edit README\necho after";
    live.push({ prompt: second });
    const turn2 = await a.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: second }] });
    live.push({ turnEnded: turn2.stopReason });
    assert.deepEqual(
      live.filter((e) => "turnEnded" in e),
      [{ turnEnded: "cancelled" }, { turnEnded: "end_turn" }],
    );

    // Another client loads the session: its replay, checked by the SDK's own schemas on the way in.
    const b = connect(url, undefined);
    clients.push(b);
    await b.connection.agent.request(methods.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    await b.connection.agent.request(methods.agent.session.load, { sessionId, cwd: served.dataDir, mcpServers: [] });

    const livePage = vp.page;
    await drawLive(livePage, sessionId, live);
    const replayPage = await vp.open();
    pages.push(replayPage);
    await feed(replayPage, b.updates);
    const editorPage = await vp.open();
    pages.push(editorPage);
    await feed(editorPage, (await hub.openSession(sessionId)).updates);

    const shown = await blocks(livePage);
    assert.deepEqual(shown, [
      `You: ${first}`,
      "sv-turn-end: Cancelled",
      `You: ${second.replace(/\n/g, " ")}`,
      "Agent: before",
      "Permission: Permission: Edit README → Allowed here — Allow once",
      `Agent: outcome: selected ${ANSWER}after`,
      "sv-turn-end: Turn ended",
    ]);
    // The answer's own card says it was answered "here"; a replay names who answered, in the
    // words a client that watched the turn was told (a client that is no paired device).
    const elsewhere = (s: string): string => s.replace("Allowed here", "Allowed on a remote client").replace('data-settled="answered here"', 'data-settled="answered elsewhere"');
    const watched = shown.map(elsewhere);
    assert.deepEqual(await blocks(replayPage), watched, "session/load shows what the live client showed");
    assert.deepEqual(await blocks(editorPage), watched, "the editor's open shows what the live client showed");
    const html = elsewhere(await markup(livePage));
    assert.equal(await markup(replayPage), html);
    assert.equal(await markup(editorPage), html);

    // On the wire: valid session/update notifications (the SDK's schemas let them through), the marks in `_meta`.
    const asked = live.flatMap((e) => ("permission" in e ? [e.permission] : []));
    assert.equal(asked.length, 1);
    const marks = b.updates.map((n) => readMark(n.update)).filter((m) => m !== undefined);
    assert.deepEqual(marks, [
      { turnEnd: { stopReason: "cancelled" } },
      {
        permission: {
          toolCall: asked[0]?.toolCall,
          options: asked[0]?.options,
          outcome: { outcome: "selected", optionId: ANSWER },
          settledBy: "client",
        },
      },
      { turnEnd: { stopReason: "end_turn" } },
    ]);
    const prompts = b.updates.filter((n) => n.update.sessionUpdate === "user_message_chunk").map((n) => n.update as { messageId?: string | null });
    assert.equal(prompts.length, 2);
    assert.notEqual(prompts[0]?.messageId ?? undefined, prompts[1]?.messageId ?? undefined, "each prompt is a message of its own");
  });

  // Each row: what a live view was told, and the mark its replay carries instead.
  const ROWS: Array<{ name: string; live: (page: Page) => Promise<void>; mark: HistoryMark }> = [
    {
      name: "a turn stopped at the token limit",
      live: (page) => call(page, "turnEnded", "max_tokens"),
      mark: { turnEnd: { stopReason: "max_tokens" } },
    },
    {
      name: "a prompt that failed",
      live: async (page) => {
        await call(page, "error", "the agent exited");
        await call(page, "setBusy", false);
      },
      mark: { turnEnd: { error: "the agent exited" } },
    },
    {
      name: "a permission request cancelled with the turn (Esc)",
      live: async (page) => {
        await call(page, "turnStarted");
        await call(page, "permissionRequested", "p", PERMISSION);
        await page.locator(".sv-composer textarea").press("Escape");
      },
      mark: { permission: { toolCall: PERMISSION.toolCall, options: PERMISSION.options, outcome: { outcome: "cancelled" }, settledBy: "cancel" } },
    },
    {
      name: "a permission request nobody answered in time",
      live: async (page) => {
        await call(page, "permissionRequested", "p", PERMISSION);
        await call(page, "permissionSettled", "p", { by: "timeout" });
      },
      mark: { permission: { toolCall: PERMISSION.toolCall, options: PERMISSION.options, outcome: { outcome: "cancelled" }, settledBy: "timeout" } },
    },
  ];
  for (const row of ROWS) {
    test(`replayed as a mark, ${row.name} shows as it did live`, async () => {
      const live = await vp.open();
      const replay = await vp.open();
      pages.push(live, replay);
      await row.live(live);
      await feed(replay, [{ sessionId: SESSION_ID, update: markUpdate(row.mark) }]);
      assert.notEqual(await markup(live), "", "the live view drew something");
      assert.equal(await markup(replay), await markup(live));
    });
  }
});
