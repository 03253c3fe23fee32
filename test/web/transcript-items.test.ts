// The transcript's items as a person reads them, one case per defect that was
// reported on them: the mode selectors, a diff shown twice, a tool's Markdown
// output, a rejected edit, the answer labels, and paths that open the file in
// the editor. Headless chromium under the strict CSP; asserted by DOM, with
// the host calls the view made (test/web/page.ts). A page opened with
// `host: "editor"` has a host that opens files and diffs, as the editor's tab;
// the others are the phone's, which opens neither.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Page } from "playwright-core";
import type { RequestPermissionRequest, SessionConfigOption } from "@agentclientprotocol/sdk";
import { markUpdate } from "../../protocol/history.ts";
import { call, cspViolations, feed, hostCalls, openViewPage, type ViewPage } from "./page.ts";
import { n, SESSION_ID, text } from "./fixtures.ts";

const PATH = "/work/project/src/parse.ts";
const DIFF = { type: "diff" as const, path: PATH, oldText: "line one\nold line\nline three", newText: "line one\nnew line\nline three" };
const OPTIONS = [
  { optionId: "allow", name: "Allow once", kind: "allow_once" as const },
  { optionId: "always", name: "Always allow", kind: "allow_always" as const },
  { optionId: "reject", name: "Reject", kind: "reject_once" as const },
];

/** A tool call that proposes DIFF (and names the file at a line), and the request that asks about it: with the diff in the request or only in the tool call. */
function editAsked(id: string, diffInRequest: boolean): { updates: ReturnType<typeof n>[]; request: RequestPermissionRequest } {
  return {
    updates: [n({ sessionUpdate: "tool_call", toolCallId: id, title: "Edit src/parse.ts", kind: "edit", status: "pending", content: [DIFF], locations: [{ path: PATH, line: 2 }] })],
    request: {
      sessionId: SESSION_ID,
      toolCall: { toolCallId: id, title: "Edit src/parse.ts", kind: "edit", status: "pending", ...(diffInRequest ? { content: [DIFF] } : {}) },
      options: OPTIONS,
    },
  };
}

const MODES = { currentModeId: "ask", availableModes: [{ id: "ask", name: "Ask" }, { id: "code", name: "Code" }] };
const MODE_OPTION: SessionConfigOption = { id: "mode", name: "Mode", category: "mode", type: "select", currentValue: "ask", options: [{ value: "ask", name: "Ask" }, { value: "code", name: "Code" }] };
const MODEL_OPTION: SessionConfigOption = { id: "model", name: "Model", category: "model", type: "select", currentValue: "m1", options: [{ value: "m1", name: "Model 1" }, { value: "m2", name: "Model 2" }] };

const REPO = resolve(import.meta.dirname, "../..");

describe("transcript items", () => {
  let vp: ViewPage;
  const pages: Page[] = [];
  // Screenshots go to docs/images only with ACP_REMOTE_UPDATE_SCREENSHOTS=1, so a test run leaves the repository as it was.
  const update = Boolean(process.env["ACP_REMOTE_UPDATE_SCREENSHOTS"]);
  const shots = update ? join(REPO, "docs/images") : mkdtempSync(join(tmpdir(), "acp-remote-shots-"));
  before(async () => {
    vp = await openViewPage();
  });
  after(async () => {
    for (const page of pages) await page.close().catch(() => undefined);
    await vp?.close();
    if (!update) rmSync(shots, { recursive: true, force: true });
  });

  async function fresh(options: { host?: "editor"; width?: number; height?: number } = {}): Promise<Page> {
    const page = await vp.open(options);
    pages.push(page);
    return page;
  }

  test("regression: the agent's modes and a config option of category mode were two selectors both labelled Mode; the config option is now the one Mode selector", async () => {
    const page = await fresh();
    await call(page, "setModes", MODES);
    assert.equal(await page.getByRole("combobox", { name: "Mode", exact: true }).count(), 1, "the modes alone: their selector");
    await call(page, "setConfigOptions", [MODE_OPTION, MODEL_OPTION]);
    const mode = page.getByRole("combobox", { name: "Mode", exact: true });
    assert.equal(await mode.count(), 1, "one selector labelled Mode");
    assert.equal(await mode.getAttribute("data-config-id"), "mode", "the config option's, which supersedes the modes");
    assert.equal(await page.getByRole("combobox", { name: "Model" }).count(), 1);
    await mode.selectOption("code");
    const calls = (await hostCalls(page)).filter((c) => c.method === "setConfigOption" || c.method === "setMode");
    assert.deepEqual(calls, [{ method: "setConfigOption", args: ["mode", "code"] }]);
    // The agent stops offering the option: its modes are the selector again.
    await call(page, "setConfigOptions", [MODEL_OPTION]);
    assert.equal(await page.getByRole("combobox", { name: "Mode", exact: true }).getAttribute("class"), "sv-mode");
  });

  for (const diffInRequest of [true, false]) {
    test(`regression: the diff showed twice, in the tool card and in the permission card; it shows once, next to the buttons that answer it (the diff ${diffInRequest ? "in the request" : "only in the tool call"})`, async () => {
      const page = await fresh();
      const { updates, request } = editAsked("edit-1", diffInRequest);
      await call(page, "turnStarted");
      await feed(page, updates);
      await call(page, "permissionRequested", "p1", request);
      assert.equal(await page.locator(".sv-transcript .sv-diff").count(), 1, "one diff in the transcript");
      const perm = page.locator('.sv-perm[data-request-id="p1"]');
      assert.equal(await perm.locator(".sv-diff").count(), 1, "the diff is in the permission card");
      // The diff comes right before the buttons that answer it.
      const next = await perm.locator(".sv-diff").evaluate((d) => d.closest(".sv-tool-content")?.nextElementSibling?.className);
      assert.equal(next, "sv-perm-options");
      const tool = page.locator('[data-tool-call-id="edit-1"]');
      assert.equal(await tool.locator(".sv-diff").count(), 0);
      assert.match((await tool.locator(".sv-diff-ref").textContent()) ?? "", /Proposed change to \/work\/project\/src\/parse\.ts, shown with the permission request/);
      // The agent's update after the answer brings the diff again: it still shows once.
      await tool.page().locator('.sv-perm[data-request-id="p1"] button[data-option-id="allow"]').click();
      await feed(page, [n({ sessionUpdate: "tool_call_update", toolCallId: "edit-1", status: "completed", content: [DIFF, { type: "content", content: text("Applied.") }] })]);
      assert.equal(await page.locator(".sv-transcript .sv-diff").count(), 1);
      // A replay shows it once too, in the settled card.
      const replay = await fresh();
      await feed(replay, [
        ...updates,
        n(markUpdate({ permission: { toolCall: request.toolCall, options: OPTIONS, outcome: { outcome: "selected", optionId: "allow" }, settledBy: "client" } })),
      ]);
      assert.equal(await replay.locator(".sv-transcript .sv-diff").count(), 1);
      assert.equal(await replay.locator(".sv-perm .sv-diff").count(), 1);
    });
  }

  test("regression: a failed tool's text with ``` fences showed the fences raw; it is Markdown, the fenced part a code block", async () => {
    const page = await fresh();
    const output = "Command failed with exit code 1:\n\n```\nError: Cannot find module 'left-pad'\n    at require (node:internal)\n```";
    await feed(page, [
      n({ sessionUpdate: "tool_call", toolCallId: "run-1", title: "npm test", kind: "execute", status: "in_progress" }),
      n({ sessionUpdate: "tool_call_update", toolCallId: "run-1", status: "failed", content: [{ type: "content", content: text(output) }] }),
    ]);
    const card = page.locator('[data-tool-call-id="run-1"]');
    assert.equal(await card.locator(".sv-tool-text p").first().textContent(), "Command failed with exit code 1:");
    assert.equal(await card.locator(".sv-tool-text pre code").textContent(), "Error: Cannot find module 'left-pad'\n    at require (node:internal)\n");
    assert.doesNotMatch((await card.textContent()) ?? "", /```/);
    assert.equal(await card.locator(".sv-tool-text .sv-copy").count(), 1, "the code block has its copy button");
    assert.equal(await card.locator(".sv-status").textContent(), "failed");
  });

  test("regression: a rejected edit was styled like an allowed one; its diff is dimmed and struck through, its badge says rejected, and a failed one says failed", async () => {
    const page = await fresh();
    const { updates, request } = editAsked("edit-2", true);
    await call(page, "turnStarted");
    await feed(page, updates);
    await call(page, "permissionRequested", "p2", request);
    await page.locator('.sv-perm[data-request-id="p2"] button[data-option-id="reject"]').click();
    await feed(page, [n({ sessionUpdate: "tool_call_update", toolCallId: "edit-2", status: "failed" })]);
    const perm = page.locator('.sv-perm[data-request-id="p2"]');
    assert.equal(await perm.getAttribute("data-verdict"), "rejected");
    assert.equal(await perm.locator(".sv-perm-outcome").textContent(), "Rejected here");
    const style = await perm.locator(".sv-diff-lines").evaluate((e) => ({ decoration: getComputedStyle(e).textDecorationLine, opacity: Number(getComputedStyle(e).opacity) }));
    assert.equal(style.decoration, "line-through");
    assert.ok(style.opacity < 1, `opacity ${style.opacity}`);
    const tool = page.locator('[data-tool-call-id="edit-2"]');
    assert.equal(await tool.getAttribute("data-verdict"), "rejected");
    assert.equal(await tool.locator(".sv-status").textContent(), "rejected");
    assert.match((await tool.getAttribute("aria-label")) ?? "", /rejected$/);
    // An allowed edit is not struck.
    const allowed = editAsked("edit-3", true);
    await feed(page, allowed.updates);
    await call(page, "permissionRequested", "p3", allowed.request);
    await page.locator('.sv-perm[data-request-id="p3"] button[data-option-id="allow"]').click();
    assert.equal(await page.locator('.sv-perm[data-request-id="p3"] .sv-diff-lines').evaluate((e) => getComputedStyle(e).textDecorationLine), "none");
    // An edit that failed without a permission request: failed, its diff struck.
    await feed(page, [n({ sessionUpdate: "tool_call", toolCallId: "edit-4", title: "Edit README.md", kind: "edit", status: "failed", content: [{ ...DIFF, path: "/work/project/README.md" }] })]);
    const failed = page.locator('[data-tool-call-id="edit-4"]');
    assert.equal(await failed.locator(".sv-status").textContent(), "failed");
    assert.equal(await failed.locator(".sv-diff-lines").evaluate((e) => getComputedStyle(e).textDecorationLine), "line-through");
  });

  test("regression: answer labels said 'Withdrawn' when the phone allowed, a bare 'Answered' after Stop, 'Answered here:' with nothing after; they say who answered what", async () => {
    const page = await fresh();
    await call(page, "turnStarted");
    const outcome = async (id: string) => page.locator(`.sv-perm[data-request-id="${id}"] .sv-perm-outcome`).textContent();
    const ask = (id: string) => call(page, "permissionRequested", id, { sessionId: SESSION_ID, toolCall: { toolCallId: `t-${id}`, title: `Edit ${id}` }, options: OPTIONS });

    await ask("phone");
    await call(page, "permissionSettled", "phone", { optionId: "allow", by: "client", device: "Pixel 8" });
    assert.equal(await outcome("phone"), "Allowed on Pixel 8 — Allow once");
    assert.equal(await page.locator('.sv-perm[data-request-id="phone"]').getAttribute("data-settled"), "answered elsewhere");

    await ask("editor");
    await call(page, "permissionSettled", "editor", { optionId: "always", by: "editor" });
    assert.equal(await outcome("editor"), "Allowed in the editor — Always allow");

    await ask("note");
    await call(page, "permissionSettled", "note", { optionId: "reject", by: "notification" });
    assert.equal(await outcome("note"), "Rejected from a notification");

    // Told first only that it went (the cancellation), then who answered: the label is told anew.
    await ask("later");
    await call(page, "permissionSettled", "later", "withdrawn");
    assert.equal(await outcome("later"), "Withdrawn");
    await call(page, "permissionSettled", "later", { optionId: "reject", by: "client", device: "Pixel 8" });
    assert.equal(await outcome("later"), "Rejected on Pixel 8");

    await ask("timeout");
    await call(page, "permissionSettled", "timeout", { by: "timeout" });
    assert.equal(await outcome("timeout"), "Withdrawn: nobody answered in time");

    // Stop (Esc) answers the open request as cancelled; the host's word after it (the editor's tab says it answered) keeps the reason.
    await ask("stop");
    await page.locator(".sv-composer textarea").press("Escape");
    assert.equal(await outcome("stop"), "Withdrawn: the turn was stopped");
    await call(page, "permissionSettled", "stop", "answered here");
    assert.equal(await outcome("stop"), "Withdrawn: the turn was stopped");

    // A replay names the device that answered.
    await feed(page, [
      n(markUpdate({ permission: { toolCall: { toolCallId: "t-r", title: "Edit r" }, options: OPTIONS, outcome: { outcome: "selected", optionId: "allow" }, settledBy: "client", device: "Pixel 8" } })),
      n(markUpdate({ permission: { toolCall: { toolCallId: "t-s", title: "Edit s" }, options: OPTIONS, outcome: { outcome: "cancelled" }, settledBy: "cancel" } })),
    ]);
    const replayed = await page.locator(".sv-perm").evaluateAll((cards) => cards.slice(-2).map((c) => c.querySelector(".sv-perm-outcome")?.textContent));
    assert.deepEqual(replayed, ["Allowed on Pixel 8 — Allow once", "Withdrawn: the turn was stopped"]);
    const texts = await page.locator(".sv-perm-outcome").allTextContents();
    assert.ok(!texts.some((t) => /^Answered\b/.test(t) || t.trim() === ""), `no bare "Answered": ${JSON.stringify(texts)}`);
  });

  test("regression: file paths in tool cards could not be clicked; in the editor a location opens the file at its line and a diff's file opens, on the phone they are text", async () => {
    const { updates } = editAsked("edit-5", false);
    const editor = await fresh({ host: "editor" });
    await feed(editor, updates);
    const card = editor.locator('[data-tool-call-id="edit-5"]');
    await card.locator(".sv-locations .sv-path-link").click();
    await card.locator(".sv-diff .sv-path-link").click();
    const opened = (await hostCalls(editor)).filter((c) => c.method === "openFile");
    // The diff's file has no line: it opens at its top.
    assert.deepEqual(opened.map((c) => [c.args[0], c.args[1] ?? null]), [[PATH, 2], [PATH, null]]);
    assert.equal(await card.locator(".sv-locations .sv-path-link").textContent(), `${PATH}:2`);

    const phone = await fresh();
    await feed(phone, updates);
    const phoneCard = phone.locator('[data-tool-call-id="edit-5"]');
    assert.equal(await phoneCard.locator(".sv-path-link").count(), 0, "no link on the phone");
    assert.equal(await phoneCard.locator(".sv-locations .sv-path").textContent(), `${PATH}:2`);
    assert.deepEqual(await cspViolations(editor), []);
  });

  test("Open Diff: in the editor the permission card's diff asks the host to open it, with the request's id; the tool card's own diff without one; the phone has no Open Diff", async () => {
    const editor = await fresh({ host: "editor" });
    const { updates, request } = editAsked("edit-6", true);
    await call(editor, "turnStarted");
    await feed(editor, updates);
    await call(editor, "permissionRequested", "p6", request);
    await editor.locator('.sv-perm[data-request-id="p6"] .sv-open-diff').click();
    await feed(editor, [n({ sessionUpdate: "tool_call", toolCallId: "edit-7", title: "Edit README.md", kind: "edit", status: "completed", content: [{ type: "diff", path: "/work/project/README.md", oldText: null, newText: "# Hi\n" }] })]);
    await editor.locator('[data-tool-call-id="edit-7"] .sv-open-diff').click();
    const calls = (await hostCalls(editor)).filter((c) => c.method === "openDiff");
    assert.deepEqual(calls[0]?.args, [{ path: PATH, oldText: DIFF.oldText, newText: DIFF.newText }, "p6"]);
    assert.deepEqual(calls[1]?.args.slice(0, 1), [{ path: "/work/project/README.md", oldText: null, newText: "# Hi\n" }]);
    assert.equal(calls[1]?.args[1] ?? undefined, undefined, "a diff no request asks about opens without answers");

    const phone = await fresh();
    await feed(phone, updates);
    await call(phone, "permissionRequested", "p6", request);
    assert.equal(await phone.locator(".sv-open-diff").count(), 0);
  });

  for (const size of [{ name: "phone", width: 390, height: 844 }, { name: "wide", width: 1400, height: 900 }] as const) {
    test(`the items together fit ${size.width}×${size.height}: one Mode selector, a rejected edit struck through, Markdown output, answers that say who (screenshot transcript-items-${size.name})`, async () => {
      // The wide one as the editor's tab draws it (paths are links, Open Diff), the phone's as the phone does.
      const page = await fresh({ width: size.width, height: size.height, ...(size.name === "wide" ? { host: "editor" as const } : {}) });
      await call(page, "setModes", MODES);
      await call(page, "setConfigOptions", [MODE_OPTION, MODEL_OPTION]);
      await call(page, "turnStarted");
      await feed(page, [
        n({ sessionUpdate: "session_info_update", title: "Tidy the parser" }),
        n({ sessionUpdate: "user_message_chunk", content: text("Tidy the parser and run the tests") }),
        n({ sessionUpdate: "tool_call", toolCallId: "t-test", title: "npm test", kind: "execute", status: "failed", content: [{ type: "content", content: text("Tests failed:\n\n```\nFAIL test/parse.test.ts\n  ✕ parses an empty object (4 ms)\n```") }] }),
      ]);
      const rejected = editAsked("t-edit-1", true);
      await feed(page, rejected.updates);
      await call(page, "permissionRequested", "r1", rejected.request);
      await page.locator('.sv-perm[data-request-id="r1"] button[data-option-id="reject"]').click();
      await feed(page, [n({ sessionUpdate: "tool_call_update", toolCallId: "t-edit-1", status: "failed" })]);
      const allowed = editAsked("t-edit-2", false);
      await feed(page, allowed.updates);
      await call(page, "permissionRequested", "r2", allowed.request);
      await call(page, "permissionSettled", "r2", { optionId: "allow", by: "client", device: "Pixel 8" });
      await feed(page, [n({ sessionUpdate: "tool_call_update", toolCallId: "t-edit-2", status: "completed" })]);
      await feed(page, [n({ sessionUpdate: "agent_message_chunk", content: text("You rejected the first edit; the second, allowed on your phone, is in.") })]);
      await call(page, "turnEnded", "end_turn");
      const widths = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
      assert.ok(widths.scroll <= widths.client, `page scrolls sideways: ${widths.scroll} > ${widths.client}`);
      assert.equal(await page.getByRole("combobox", { name: "Mode", exact: true }).count(), 1);
      // From the failed tests' output down.
      await page.locator('[data-tool-call-id="t-test"]').evaluate((e) => e.scrollIntoView({ block: "start" }));
      await page.screenshot({ path: join(shots, `transcript-items-${size.name}.png`) });
    });
  }
});
