// The composer and selectors driven with the keyboard and mouse in headless
// chromium: what the view asks of its host is read back from the harness.
import { after, before, beforeEach, describe, test } from "node:test";
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { call, feed, hostCalls, openViewPage, type ViewPage } from "./page.ts";
import { n, PERMISSION } from "./fixtures.ts";

const COMMANDS = n({
  sessionUpdate: "available_commands_update",
  availableCommands: [
    { name: "review", description: "Review the changes" },
    { name: "reset", description: "Start over" },
    { name: "test", description: "Run the tests", input: { hint: "which tests" } },
  ],
});

describe("session view composer", () => {
  let vp: ViewPage;
  let page: Page;
  before(async () => {
    vp = await openViewPage();
  });
  beforeEach(async () => {
    await page?.close();
    page = await vp.open();
  });
  after(async () => {
    await vp?.close();
  });

  const input = () => page.getByRole("combobox", { name: "Message" });

  test("Enter sends the prompt and clears the box", async () => {
    await input().fill("hello agent");
    await input().press("Enter");
    assert.deepEqual(await hostCalls(page), [{ method: "prompt", args: ["hello agent"] }]);
    assert.equal(await input().inputValue(), "");
  });

  test("Shift+Enter makes a new line and sends nothing", async () => {
    await input().pressSequentially("line one");
    await input().press("Shift+Enter");
    await input().pressSequentially("line two");
    assert.equal(await input().inputValue(), "line one\nline two");
    assert.deepEqual(await hostCalls(page), []);
    await input().press("Enter");
    assert.deepEqual(await hostCalls(page), [{ method: "prompt", args: ["line one\nline two"] }]);
  });

  test("the Send button sends; an empty prompt is not sent", async () => {
    await input().press("Enter");
    assert.deepEqual(await hostCalls(page), []);
    await input().fill("via button");
    await page.getByRole("button", { name: "Send" }).click();
    assert.deepEqual(await hostCalls(page), [{ method: "prompt", args: ["via button"] }]);
  });

  test("Esc cancels the running turn and answers its open permission as cancelled", async () => {
    await call(page, "turnStarted");
    await call(page, "permissionRequested", 7, PERMISSION);
    assert.equal(await page.getByRole("button", { name: "Send" }).isDisabled(), true);
    await input().press("Escape");
    assert.deepEqual(await hostCalls(page), [
      { method: "answerPermission", args: [7, null] },
      { method: "cancel", args: [] },
    ]);
    assert.equal(await page.locator('.sv-perm[data-request-id="7"] button').count(), 0);
  });

  test("Esc with no running turn cancels nothing", async () => {
    await input().press("Escape");
    assert.deepEqual(await hostCalls(page), []);
  });

  test("the Stop button shows during a turn and cancels it", async () => {
    const stop = page.getByRole("button", { name: "Stop" });
    assert.equal(await stop.isVisible(), false);
    await call(page, "turnStarted");
    await stop.click();
    assert.deepEqual(await hostCalls(page), [{ method: "cancel", args: [] }]);
    await call(page, "turnEnded", "cancelled");
    assert.equal(await stop.isVisible(), false);
    assert.equal(await page.locator(".sv-turn-end").textContent(), "Cancelled");
  });

  test("slash offers the agent's commands; typing filters; Enter picks", async () => {
    await feed(page, [COMMANDS]);
    await input().pressSequentially("/");
    const options = page.getByRole("option");
    assert.deepEqual(await options.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset["name"])), ["review", "reset", "test"]);
    assert.equal(await input().getAttribute("aria-expanded"), "true");
    await input().pressSequentially("re");
    assert.deepEqual(await options.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset["name"])), ["review", "reset"]);
    await input().press("ArrowDown");
    assert.equal(await page.locator('[role=option][aria-selected="true"]').getAttribute("data-name"), "reset");
    await input().press("Enter");
    assert.equal(await input().inputValue(), "/reset ");
    assert.equal(await options.count(), 0);
    assert.deepEqual(await hostCalls(page), [], "picking a command sends nothing");
    await input().press("Enter");
    assert.deepEqual(await hostCalls(page), [{ method: "prompt", args: ["/reset "] }]);
  });

  test("Esc closes the command list without cancelling", async () => {
    await feed(page, [COMMANDS]);
    await call(page, "turnStarted");
    await input().pressSequentially("/t");
    assert.equal(await page.getByRole("option").count(), 1);
    await input().press("Escape");
    assert.equal(await page.getByRole("option").count(), 0);
    assert.deepEqual(await hostCalls(page), []);
  });

  test("a click on a command picks it", async () => {
    await feed(page, [COMMANDS]);
    await input().pressSequentially("/");
    await page.getByRole("option").filter({ hasText: "/test" }).click();
    assert.equal(await input().inputValue(), "/test ");
  });

  test("mode selector shows when modes are offered and asks the host to switch", async () => {
    assert.equal(await page.getByRole("combobox", { name: "Mode" }).count(), 0);
    await call(page, "setModes", {
      currentModeId: "ask",
      availableModes: [
        { id: "ask", name: "Ask" },
        { id: "code", name: "Code", description: "Edits files" },
      ],
    });
    const mode = page.getByRole("combobox", { name: "Mode" });
    assert.equal(await mode.inputValue(), "ask");
    await mode.selectOption("code");
    assert.deepEqual(await hostCalls(page), [{ method: "setMode", args: ["code"] }]);
    await feed(page, [n({ sessionUpdate: "current_mode_update", currentModeId: "ask" })]);
    assert.equal(await mode.inputValue(), "ask", "the selector shows the mode the agent reports");
  });

  test("config options show as a select and a checkbox and ask the host", async () => {
    await call(page, "setConfigOptions", [
      {
        id: "model",
        name: "Model",
        type: "select",
        currentValue: "small",
        options: [
          { value: "small", name: "Small" },
          { value: "large", name: "Large" },
        ],
      },
      { id: "thinking", name: "Extended thinking", type: "boolean", currentValue: false },
    ]);
    await page.getByRole("combobox", { name: "Model" }).selectOption("large");
    await page.getByRole("checkbox", { name: "Extended thinking" }).check();
    assert.deepEqual(await hostCalls(page), [
      { method: "setConfigOption", args: ["model", "large"] },
      { method: "setConfigOption", args: ["thinking", true] },
    ]);
    await feed(page, [
      n({
        sessionUpdate: "config_option_update",
        configOptions: [{ id: "model", name: "Model", type: "select", currentValue: "small", options: [{ group: "g", name: "Models", options: [{ value: "small", name: "Small" }] }] }],
      }),
    ]);
    assert.equal(await page.getByRole("combobox", { name: "Model" }).inputValue(), "small");
    assert.equal(await page.getByRole("checkbox", { name: "Extended thinking" }).count(), 0);
  });

  test("the draft: each change is reported, sending reports it empty, setDraft puts a kept one back", async () => {
    const drafts = (): Promise<string[]> => page.evaluate(() => (window as unknown as { sv: { drafts: string[] } }).sv.drafts);
    await input().pressSequentially("ab");
    assert.deepEqual(await drafts(), ["a", "ab"]);
    await input().press("Enter");
    assert.deepEqual((await drafts()).at(-1), "");
    await call(page, "setDraft", "kept\nacross a reload");
    assert.equal(await input().inputValue(), "kept\nacross a reload");
    assert.deepEqual((await drafts()).at(-1), "kept\nacross a reload");
    await input().press("Enter");
    assert.deepEqual((await hostCalls(page)).at(-1), { method: "prompt", args: ["kept\nacross a reload"] });
  });

  test("connection state shows as a banner until connected", async () => {
    await call(page, "setConnection", "reconnecting");
    assert.equal(await page.locator(".sv-connection").textContent(), "Connection lost, reconnecting…");
    await call(page, "setConnection", "connected");
    assert.equal(await page.locator(".sv-connection").isVisible(), false);
  });

  test("while the session takes no prompt, the reason shows by the box with its button, Send is disabled and Enter keeps the text; once it can, Enter sends it", async () => {
    await input().fill("a prompt for later");
    await page.evaluate(() => {
      const sv = (window as unknown as { sv: { view: { setUnavailable(u: unknown): void }; calls: Array<{ method: string; args: unknown[] }> } }).sv;
      sv.view.setUnavailable({ reason: "The ACP Remote server is stopped.", action: { label: "Start Server", run: () => sv.calls.push({ method: "startServer", args: [] }) } });
    });
    const notice = page.getByRole("status").filter({ hasText: "The ACP Remote server is stopped." });
    assert.equal(await notice.isVisible(), true, "the reason shows");
    assert.equal(await input().getAttribute("aria-describedby"), await notice.getAttribute("id"), "the box says why it does not send");
    assert.equal(await page.getByRole("button", { name: "Send" }).isDisabled(), true);
    await input().press("Enter");
    assert.equal(await input().inputValue(), "a prompt for later", "the text stays");
    assert.deepEqual(await hostCalls(page), []);
    await page.getByRole("button", { name: "Start Server" }).click();
    assert.deepEqual(await hostCalls(page), [{ method: "startServer", args: [] }]);
    await call(page, "setUnavailable", undefined);
    assert.equal(await page.locator(".sv-unavailable").isVisible(), false);
    await input().press("Enter");
    assert.deepEqual((await hostCalls(page)).at(-1), { method: "prompt", args: ["a prompt for later"] });
  });

  test("a reason without a button (the session was closed) shows alone", async () => {
    await call(page, "setUnavailable", { reason: "This session was closed: it takes no more prompts." });
    assert.equal(await page.locator(".sv-unavailable").textContent(), "This session was closed: it takes no more prompts.");
    assert.equal(await page.locator(".sv-unavailable button").count(), 0);
    assert.equal(await page.getByRole("button", { name: "Send" }).isDisabled(), true);
  });

  test("the heading is the session's name until the agent gives a title; a title outlasts a new name; a cleared title with none before shows the name", async () => {
    const title = page.locator("h1.sv-title");
    await call(page, "setName", "fixture · 6baca6");
    assert.equal(await title.textContent(), "fixture · 6baca6");
    await feed(page, [n({ sessionUpdate: "session_info_update", title: "Fix the parser" })]);
    assert.equal(await title.textContent(), "Fix the parser");
    await call(page, "setName", "fixture · 000000");
    assert.equal(await title.textContent(), "Fix the parser");
    const fresh = await vp.open();
    try {
      await call(fresh, "setName", "fixture · 6baca6");
      await feed(fresh, [n({ sessionUpdate: "session_info_update", title: null })]);
      assert.equal(await fresh.locator("h1.sv-title").textContent(), "fixture · 6baca6");
    } finally {
      await fresh.close();
    }
  });

  test("dispose removes the view", async () => {
    await call(page, "dispose");
    assert.equal(await page.locator(".sv-root").count(), 0);
  });
});
