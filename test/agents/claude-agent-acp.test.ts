// Claude Agent (@agentclientprotocol/claude-agent-acp, the Anthropic
// Messages API) doing real turns behind `acp-remote serve`; besides the
// shared turns: the permission answered from the web client on a phone-sized
// page (whose transcript shows the text, the tool call with its diff and its
// status), a deferred `/v1` completion run by the agent, and the server's
// IS_SANDBOX kept from it.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import OpenAI, { NotFoundError } from "openai";
import type { Browser } from "playwright-core";
import { methods, type SessionNotification } from "@agentclientprotocol/sdk";
import { chunks } from "../helpers/scripted-model/server.ts";
import { drawHistory } from "../helpers/view-model.ts";
import { launch, openPhone, PHONE, type Phone } from "../web-client/browser.ts";
import { buildToDist } from "../web-client/build.ts";
import { pollDeferred } from "../v1/harness.ts";
import { TOKEN } from "./agent-serve.ts";
import { describeAgentTurns, newSession, prompt, TURN_TIMEOUT_MS } from "./agent-turns.ts";
import { CLAUDE_AGENT } from "./real-agents.ts";

// The server runs where a container set IS_SANDBOX for its own tools (this
// machine and CI do too); the agent must not inherit it (see the last test).
process.env["IS_SANDBOX"] = "yes";

describeAgentTurns(CLAUDE_AGENT, { writesThroughClientFs: false, runsCommandsThroughClientTerminal: false, loadRestoresHistory: true, onReject: "tells the model", offers: { modes: true, configOptions: true, slashCommands: true } }, (served) => {
  let browser: Browser | undefined;
  let phone: Phone | undefined;
  before(async () => {
    await buildToDist();
    browser = await launch();
  });
  after(async () => {
    await phone?.close();
    await browser?.close();
  });

  test("Allow from the web client at 390×844: the file is written, and the phone's transcript shows the text, the tool call with its final status, and its diff once, with the request", { timeout: TURN_TIMEOUT_MS }, async () => {
    const { server, api, cwd } = served();
    const trigger = "Write the phone file";
    const file = join(cwd, "phone.txt");
    const content = "Allowed from a phone.\n";
    api.script({ trigger, turns: [{ text: chunks("I will write phone.txt now."), toolCall: CLAUDE_AGENT.writeTool(file, content) }, { text: chunks("phone.txt is written.") }] });
    phone = await openPhone(browser!, server.url);
    const { page } = phone;
    assert.deepEqual(page.viewportSize(), PHONE);
    await page.goto(`${server.url}/#token=${TOKEN}`);
    await page.locator(".wc-list").waitFor();
    await page.locator("#wc-cwd").fill(cwd);
    await page.locator(".wc-new button[type=submit]").click();
    await page.locator('.sv-root[data-connection="connected"]').waitFor();
    await page.locator(".sv-input").fill(`${trigger}, please.`);
    await page.locator(".sv-input").press("Enter");
    // The agent's own permission request, answered on the phone.
    const permission = page.locator(".sv-perm").first();
    await permission.locator(".sv-diff", { hasText: content.trim() }).waitFor();
    await permission.locator("button.sv-allow_once").click();
    await page.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor({ timeout: TURN_TIMEOUT_MS / 2 });
    assert.equal(readFileSync(file, "utf8"), content);

    // The agent's messages. When the model's stream breaks, Claude Code asks the model again and Claude
    // Agent may send the rest of the text as a message of its own (the next test): then, and only then, the
    // first sentence may show in two messages.
    const messages = (await page.locator(".sv-agent .sv-body").allTextContents()).map((text) => text.trim());
    const askedAgain = api.answered(trigger).filter((r) => r.answered?.turn === 0).length > 1;
    // What the transcript holds in order, so that a failure shows what came between.
    const outline = await page.locator(".sv-transcript > *").evaluateAll((nodes) => nodes.map((n) => `${n.className}: ${(n.textContent ?? "").slice(0, 60)}`).join("\n"));
    if (!askedAgain) assert.equal(messages.length, 2, outline);
    assert.deepEqual([messages.slice(0, -1).join(""), messages.at(-1)], ["I will write phone.txt now.", "phone.txt is written."], outline);
    const tool = page.locator('.sv-tool[data-kind="edit"]').last();
    assert.equal(await tool.getAttribute("data-status"), "completed");
    // The diff shows once, beside the buttons that answered it; the tool card points there.
    await tool.locator(".sv-diff-ref", { hasText: "phone.txt" }).waitFor();
    assert.equal(await tool.locator(".sv-diff").count(), 0);
    assert.match((await permission.locator(".sv-diff-lines").textContent()) ?? "", /Allowed from a phone\./);
    assert.deepEqual(await phone.violations(), [], "no CSP violation");
    assert.deepEqual(phone.foreign, [], "no request to another host");
  });

  test("a model stream cut in the middle of the text: Claude Code asks the model again and Claude Agent sends the rest, in the same message or one of its own; the client gets the whole text in order, and a client that loads the session later gets the same messages", { timeout: TURN_TIMEOUT_MS }, async () => {
    const { api, cwd } = served();
    const remote = await served().connect();
    const trigger = "Write the cut file";
    const file = join(cwd, "cut.txt");
    const text = "I will write cut.txt now.";
    api.script({ trigger, turns: [{ text: chunks(text), cutAfter: 2, toolCall: CLAUDE_AGENT.writeTool(file, "after a cut\n") }, { text: chunks("cut.txt is written.") }] });
    const sessionId = await newSession(CLAUDE_AGENT, remote, cwd);
    const result = await prompt(remote, sessionId, `${trigger}, please.`);
    assert.equal(result.stopReason, "end_turn");
    assert.equal(readFileSync(file, "utf8"), "after a cut\n");
    // The first answer cut, the same turn asked again (streamed or not, as Claude Code decides by how the stream ended), then the turn after the tool.
    assert.deepEqual(api.answered(trigger).map((r) => r.answered?.turn), [0, 0, 1]);
    // Whole and in order: the rest of the first sentence comes in the same message or in one of its own, as
    // Claude Code resumed (both happen), and the text after the tool in its own.
    const live = agentMessages(remote.updates, sessionId);
    assert.equal(live.map((m) => m.text).join(""), `${text}cut.txt is written.`);
    assert.equal(live.at(-1)?.text, "cut.txt is written.");
    // A client that opens the session later (a page reloaded) is shown the same messages.
    const later = await served().connect();
    await later.agent.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
    assert.deepEqual(agentMessages(later.updates, sessionId), live);
  });

  test("/v1: a deferred completion whose model is the agent returns the scripted answer, exactly once", { timeout: TURN_TIMEOUT_MS }, async () => {
    const { server, api } = served();
    const prompts = () => served().calls().filter((c) => c.from === "client" && c.method === methods.agent.session.prompt).length;
    const promptsBefore = prompts();
    const trigger = "Give the deferred answer";
    api.script({ trigger, turns: [{ text: chunks("This is the deferred answer.") }] });
    const openai = new OpenAI({ apiKey: TOKEN, baseURL: `${server.url}/v1`, maxRetries: 0 });
    const { request_id } = (await openai.post("/chat/completions", {
      body: { model: CLAUDE_AGENT.name, messages: [{ role: "user", content: `${trigger}.` }], deferred: true },
    })) as { request_id: string };
    const got = await pollDeferred(openai, request_id);
    assert.equal(got.status, 200, JSON.stringify(got.body));
    const body = got.body as { id: string; model: string; choices: Array<{ message: { content: string }; finish_reason: string }> };
    assert.equal(body.id, request_id);
    assert.equal(body.choices[0]?.message.content, "This is the deferred answer.");
    assert.equal(body.choices[0]?.finish_reason, "stop");
    await assert.rejects(openai.get(`/chat/deferred-completion/${request_id}`), NotFoundError);
    // Counted at the agent's pipe: the model may be asked again for one turn (a stream that broke, above).
    assert.equal(prompts() - promptsBefore, 1, "the job prompted the agent once");
    assert.ok(api.answered(trigger).length >= 1, "the agent asked the model");
  });

  test("regression: a server whose environment has IS_SANDBOX=yes (a container's) runs Claude Agent, which still asks permission before an edit", { timeout: TURN_TIMEOUT_MS }, async () => {
    // This file's server started with IS_SANDBOX=yes in its environment: inherited, the agent skips every
    // permission request and, as root, cannot start Claude Code at all (session/new fails).
    const { api, cwd } = served();
    const remote = await served().connect();
    const trigger = "Write the sandbox file";
    const file = join(cwd, "sandbox.txt");
    api.script({ trigger, turns: [{ text: chunks("Writing sandbox.txt."), toolCall: CLAUDE_AGENT.writeTool(file, "asked first\n") }, { text: chunks("Done.") }] });
    const sessionId = await newSession(CLAUDE_AGENT, remote, cwd);
    const result = await prompt(remote, sessionId, `${trigger}, please.`);
    assert.equal(result.stopReason, "end_turn");
    assert.ok(remote.permissions.some((p) => p.sessionId === sessionId), "the agent asked permission");
    assert.equal(readFileSync(file, "utf8"), "asked first\n");
  });
});

/** The agent's messages in a session, as the session view draws them (test/helpers/view-model.ts). */
function agentMessages(updates: readonly SessionNotification[], sessionId: string): Array<{ messageId: string | undefined; text: string }> {
  const { blocks } = drawHistory(updates.filter((n) => n.sessionId === sessionId).map((n) => n.update));
  return blocks.flatMap((b) => (b.block === "message" && b.who === "agent" ? [{ messageId: b.messageId, text: b.text }] : []));
}
