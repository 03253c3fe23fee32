// The extension suite in a real VS Code (code-server), driven by Playwright
// with Debian's chromium. Installs what it needs (setup.ts), builds the
// extension and the in-editor suite, starts code-server and the browser, and
// serves the suite's requests for browser actions (clicks in webviews,
// screenshots into docs/images/). Prints "N passed, N failed" and exits
// non-zero on failure.
//
//   node test/vscode/run.ts --installed  # the smoke of the installed .vsix (installed-vsix.ts)
//   node test/vscode/run.ts            # ACP_REMOTE_CACHE=... to move the cache,
//                                      # ACP_REMOTE_KEEP_RUN=1 to keep the run folder,
//                                      # ACP_REMOTE_UPDATE_SCREENSHOTS=1 to write docs/images/
//                                      # (otherwise screenshots stay in the run folder)
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSuite, SUITE_ENTRY, writeTestWorkspace } from "./build-suite.ts";
import { INSTALLED_SUITE_ENTRY, installVsix } from "./installed-vsix.ts";
import { chromium, type Browser, type Frame, type Page } from "playwright-core";
import { CHROMIUM, ensureCodeServer, node24BinDir } from "./setup.ts";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const NODE = join(repo, "node_modules/.bin/node");
/** Whole run: install, start, every case. */
const RUN_TIMEOUT_MS = Number(process.env["ACP_REMOTE_VSCODE_TIMEOUT_MS"] ?? 15 * 60_000);
const STEP_TIMEOUT_MS = 60_000;

/** The run of the installed .vsix (a smoke of a few cases) instead of the suite on the source folder. */
const INSTALLED = process.argv.includes("--installed");
const RUN_NAME = INSTALLED ? "vscode (installed .vsix)" : "vscode";

function log(line: string): void {
  process.stderr.write(`[${RUN_NAME}] ${line}\n`);
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

function killGroup(child: ChildProcess | undefined): void {
  if (!child?.pid) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** The frame (two levels into a webview) whose document matches `selector`. */
async function webviewFrame(page: Page, selector: string, timeoutMs = STEP_TIMEOUT_MS): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const frame of page.frames()) {
      if (frame.name() !== "active-frame" && !frame.url().includes("fake.html")) continue;
      try {
        if (await frame.$(selector)) return frame;
      } catch {
        // Detached while we looked.
      }
    }
    if (Date.now() > deadline) throw new Error(`no webview shows ${selector}`);
    await page.waitForTimeout(200);
  }
}

async function waitText(read: () => Promise<string>, contains: string | undefined, what: string): Promise<string> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const text = await read().catch(() => "");
    if (!contains || text.includes(contains)) return text;
    if (Date.now() > deadline) throw new Error(`${what} never showed "${contains}"; it shows:\n${text}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

type UiRequest = { action: string } & Record<string, unknown>;

/** Phone pages kept open across actions (phoneOpen … phoneClose), by the name a case gave them. */
const phones = new Map<string, Page>();

function phoneNamed(req: UiRequest): Page {
  const phone = phones.get(String(req["name"]));
  if (phone === undefined) throw new Error(`no phone page named ${String(req["name"])} is open (phoneOpen)`);
  return phone;
}

function uiActions(page: Page, screenshotDir: string): Record<string, (req: UiRequest) => Promise<unknown>> {
  return {
    async clickPermission(req) {
      const frame = await webviewFrame(page, `section[data-permission-id="${String(req["permissionId"])}"]`);
      // A real click: the button, through the webview's own event listener.
      await frame.click(`section[data-permission-id="${String(req["permissionId"])}"] button[data-option-id="${String(req["optionId"])}"]`);
      return null;
    },
    async clickWebview(req) {
      const frame = await webviewFrame(page, String(req["frameSelector"]));
      await frame.click(String(req["selector"]), { timeout: STEP_TIMEOUT_MS });
      return null;
    },
    async clickNotificationLink(req) {
      const item = page.locator(".notifications-center .notification-list-item", { hasText: String(req["notification"]) });
      await item.locator("a", { hasText: String(req["label"]) }).first().click({ timeout: STEP_TIMEOUT_MS });
      return null;
    },
    async clickDialogButton(req) {
      // A modal dialog's button (showWarningMessage with modal: true).
      await page.click(`.monaco-dialog-box .monaco-button:has-text("${String(req["label"])}")`, { timeout: STEP_TIMEOUT_MS });
      return null;
    },
    async clickNotificationButton(req) {
      await page.click(`.notifications-center .monaco-button:has-text("${String(req["label"])}")`, { timeout: STEP_TIMEOUT_MS });
      return null;
    },
    async permissionState(req) {
      const sel = `section[data-permission-id="${String(req["permissionId"])}"]`;
      const frame = await webviewFrame(page, sel);
      const deadline = Date.now() + STEP_TIMEOUT_MS;
      for (;;) {
        const state = await frame.getAttribute(sel, "data-state");
        if (state !== "pending" || Date.now() > deadline) return { state, buttons: await frame.locator(`${sel} button`).count() };
        await page.waitForTimeout(200);
      }
    },
    async webviewText(req) {
      const selector = String(req["selector"]);
      const frame = await webviewFrame(page, selector);
      const text = await waitText(() => frame.innerText(selector), req["contains"] as string | undefined, selector);
      return { text };
    },
    async quickPick(req) {
      // The quick input the command opened: filtered to the label, then accepted.
      const input = page.locator(".quick-input-widget input[type=text]");
      await input.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
      // `screenshot`: the quick input as it first shows its items, before they are filtered.
      if (typeof req["screenshot"] === "string") {
        await page.locator(".quick-input-list .monaco-list-row").first().waitFor({ timeout: STEP_TIMEOUT_MS });
        await page.locator(".quick-input-widget").screenshot({ path: join(screenshotDir, `${req["screenshot"]}.png`) });
      }
      await input.fill(String(req["label"]));
      await page.locator(".quick-input-list .monaco-list-row", { hasText: String(req["label"]) }).first().waitFor({ timeout: STEP_TIMEOUT_MS });
      await input.press("Enter");
      return null;
    },
    async inputBox(req) {
      // The input box a command opened (showInputBox): its value replaced, then accepted.
      const input = page.locator(".quick-input-widget input[type=text]");
      await input.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
      await input.fill(String(req["text"]));
      await input.press("Enter");
      return null;
    },
    async treeContextMenu(req) {
      // A right click on the tree item that shows the text, then the menu entry with the label.
      await page.locator(".part.sidebar .monaco-list-row", { hasText: String(req["item"]) }).first().click({ button: "right", timeout: STEP_TIMEOUT_MS });
      const entry = page.locator(".context-view .action-item", { hasText: String(req["label"]) }).first();
      await entry.waitFor({ state: "visible", timeout: STEP_TIMEOUT_MS });
      // The menu ignores a click that comes right as it opens (the right click's own mouseup), for longer on a
      // busy machine: clicked again while the menu stays open, until it closes on the click it took.
      await page.waitForTimeout(500);
      for (let attempt = 1; ; attempt++) {
        await entry.hover();
        await entry.click({ timeout: STEP_TIMEOUT_MS });
        const closed = await entry.waitFor({ state: "hidden", timeout: 2_000 }).then(
          () => true,
          () => false,
        );
        if (closed) return null;
        if (attempt === 3) throw new Error(`the context menu kept "${String(req["label"])}" open after ${attempt} clicks`);
      }
    },
    async typeWebview(req) {
      const frame = await webviewFrame(page, String(req["frameSelector"]));
      const field = frame.locator(String(req["selector"]));
      await field.fill(String(req["text"]), { timeout: STEP_TIMEOUT_MS });
      if (typeof req["press"] === "string") await field.press(req["press"]);
      return null;
    },
    async webviewFocused(req) {
      // Whether the element has the focus in its webview's document (the caret is in it).
      const frame = await webviewFrame(page, String(req["frameSelector"]));
      return { focused: await frame.locator(String(req["selector"])).evaluate((e) => e === e.ownerDocument.activeElement, undefined, { timeout: STEP_TIMEOUT_MS }) };
    },
    async webviewInputValue(req) {
      const frame = await webviewFrame(page, String(req["frameSelector"]));
      return { value: await frame.locator(String(req["selector"])).inputValue({ timeout: STEP_TIMEOUT_MS }) };
    },
    async webviewCount(req) {
      const frame = await webviewFrame(page, String(req["frameSelector"]));
      return { count: await frame.locator(String(req["selector"])).count() };
    },
    async webviewAttribute(req) {
      // Waits until the attribute has the expected value (or the step times out with what it has).
      const selector = String(req["selector"]);
      const frame = await webviewFrame(page, selector);
      const deadline = Date.now() + STEP_TIMEOUT_MS;
      for (;;) {
        const value = await frame.getAttribute(selector, String(req["name"])).catch(() => null);
        if (value === req["equals"] || Date.now() > deadline) return { value };
        await page.waitForTimeout(200);
      }
    },
    async treeText(req) {
      const text = await waitText(() => page.innerText(".part.sidebar"), req["contains"] as string | undefined, "the tree");
      return { text };
    },
    async pageElements(req) {
      // The workbench's own elements (not a webview's) that match `selector`: their text, aria-label
      // and class. Waits until one of them shows `contains` (when given), or at least one matches.
      const selector = String(req["selector"]);
      const read = async (): Promise<Array<{ text: string; label: string | null; className: string }>> =>
        page.locator(selector).evaluateAll((elements) =>
          elements.map((e) => ({ text: (e as HTMLElement).innerText ?? "", label: e.getAttribute("aria-label"), className: typeof e.className === "string" ? e.className : "" })),
        );
      const contains = req["contains"] as string | undefined;
      const deadline = Date.now() + STEP_TIMEOUT_MS;
      for (;;) {
        const elements = await read().catch(() => []);
        const shown = elements.map((e) => `${e.text} ${e.label ?? ""} ${e.className}`).join("\n");
        if (contains === undefined ? elements.length > 0 : shown.includes(contains)) return { elements };
        if (Date.now() > deadline) throw new Error(`${selector} never showed ${contains === undefined ? "up" : `"${contains}"`}; it shows:\n${shown}`);
        await page.waitForTimeout(200);
      }
    },
    async clickPage(req) {
      // A click on the first workbench element that matches `selector` (and holds `hasText`, when given).
      const options = typeof req["hasText"] === "string" ? { hasText: req["hasText"] } : {};
      await page.locator(String(req["selector"]), options).first().click({ timeout: STEP_TIMEOUT_MS });
      return null;
    },
    async pressKey(req) {
      await page.keyboard.press(String(req["key"]));
      return null;
    },
    async notificationText(req) {
      // Toasts, or the notification centre when the suite opened it.
      const read = async (): Promise<string> =>
        (await page.locator(".notifications-toasts, .notifications-center").allInnerTexts()).join("\n");
      if (typeof req["absent"] === "string") {
        // The notification closes once the request is withdrawn.
        const absent = req["absent"];
        const deadline = Date.now() + STEP_TIMEOUT_MS;
        for (;;) {
          const text = await read();
          if (!text.includes(absent)) return { text };
          if (Date.now() > deadline) throw new Error(`the notifications still show "${absent}":\n${text}`);
          await page.waitForTimeout(200);
        }
      }
      const text = await waitText(read, req["contains"] as string | undefined, "the notifications");
      return { text };
    },
    async openWebClient(req) {
      // A pairing link opened as a phone would: a page of its own at 390×844, its own storage. The
      // page signs in, starts a session with the default agent, sends the prompt and waits for the turn's end.
      const context = await page.context().browser()!.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
      try {
        const phone = await context.newPage();
        await phone.goto(String(req["link"]));
        await phone.locator(".wc-list").waitFor({ timeout: STEP_TIMEOUT_MS });
        const paired = phone.url();
        await phone.locator(".wc-new button[type=submit]").click({ timeout: STEP_TIMEOUT_MS });
        await phone.locator('.sv-root[data-connection="connected"]').waitFor({ timeout: STEP_TIMEOUT_MS });
        await phone.locator(".sv-input").fill(String(req["prompt"]));
        await phone.locator(".sv-input").press("Enter");
        await phone.locator('.sv-turn-end[data-stop-reason="end_turn"]').waitFor({ timeout: STEP_TIMEOUT_MS });
        if (typeof req["screenshot"] === "string") await phone.screenshot({ path: join(screenshotDir, `${req["screenshot"]}.png`) });
        return { url: paired, text: (await phone.locator(".sv-agent").allInnerTexts()).join("\n"), profile: await phone.locator(".wc-link").getAttribute("data-profile") };
      } finally {
        await context.close();
      }
    },
    async openPage(req) {
      // A link opened as a phone opens it: a page of its own, with its own storage. Waits until
      // the page shows `selector`; returns how many elements match and their text.
      const context = await page.context().browser()!.newContext({ viewport: { width: 390, height: 844 } });
      try {
        const other = await context.newPage();
        const response = await other.goto(String(req["url"]));
        const matches = other.locator(String(req["selector"]));
        try {
          await matches.first().waitFor({ timeout: STEP_TIMEOUT_MS });
        } catch {
          const body = await other.locator("body").innerText().catch(() => "");
          throw new Error(`the page never showed ${String(req["selector"])}; it answered ${response?.status() ?? "nothing"} and shows:\n${body}`);
        }
        const result = { count: await matches.count(), text: (await matches.allInnerTexts()).join("\n") };
        if (typeof req["screenshot"] === "string") await other.screenshot({ path: join(screenshotDir, `${req["screenshot"]}.png`) });
        return result;
      } finally {
        await context.close();
      }
    },
    async phoneOpen(req) {
      // A phone's page that stays open while the case goes on (a server restart under it, say): a context of
      // its own at 390×844 and its own storage. Opens `url`, waits for `waitFor`; then, with `hash`, goes there
      // (a route of the web client) and waits for `thenWaitFor`.
      await phones.get(String(req["name"]))?.context().close();
      const context = await page.context().browser()!.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
      const phone = await context.newPage();
      phones.set(String(req["name"]), phone);
      await phone.goto(String(req["url"]));
      await phone.locator(String(req["waitFor"])).first().waitFor({ timeout: STEP_TIMEOUT_MS });
      if (typeof req["hash"] === "string") {
        await phone.evaluate((hash) => void (location.hash = hash), req["hash"]);
        await phone.locator(String(req["thenWaitFor"])).first().waitFor({ timeout: STEP_TIMEOUT_MS });
      }
      return { url: phone.url() };
    },
    async phoneText(req) {
      // The text of what matches `selector` on the phone page, once it holds `contains`; with `screenshot`, the page then.
      const phone = phoneNamed(req);
      const selector = String(req["selector"]);
      const text = await waitText(async () => (await phone.locator(selector).allInnerTexts()).join("\n"), req["contains"] as string | undefined, `the phone's ${selector}`);
      if (typeof req["screenshot"] === "string") await phone.screenshot({ path: join(screenshotDir, `${req["screenshot"]}.png`) });
      return { text, count: await phone.locator(selector).count() };
    },
    async phoneClose(req) {
      await phones.get(String(req["name"]))?.context().close();
      phones.delete(String(req["name"]));
      return null;
    },
    async screenshot(req) {
      if (typeof req["frameSelector"] === "string") await webviewFrame(page, req["frameSelector"]);
      await page.waitForTimeout(500);
      const path = join(screenshotDir, `${String(req["name"])}.png`);
      mkdirSync(dirname(path), { recursive: true });
      if (typeof req["element"] === "string") await page.locator(req["element"]).screenshot({ path });
      else await page.screenshot({ path });
      return { path };
    },
  };
}

function serveUi(page: Page, screenshotDir: string, failureDir: string): Promise<{ url: string; close(): void }> {
  const actions = uiActions(page, screenshotDir);
  const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      const send = (value: unknown): void => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(value));
      };
      let request: UiRequest;
      try {
        request = JSON.parse(body) as UiRequest;
      } catch {
        send({ ok: false, error: "bad JSON" });
        return;
      }
      const action = actions[request.action];
      if (!action) {
        send({ ok: false, error: `unknown action ${request.action}` });
        return;
      }
      action(request).then(
        (result) => send({ ok: true, result }),
        async (err: unknown) => {
          // What the page looked like when the action failed, beside the other screenshots.
          const path = join(failureDir, `failed-${request.action}-${Date.now()}.png`);
          await page.screenshot({ path }).catch(() => undefined);
          log(`ui ${request.action} failed; the page: ${path}`);
          send({ ok: false, error: err instanceof Error ? err.message : String(err) });
        },
      );
    });
  });
  return new Promise((r) =>
    server.listen(0, "127.0.0.1", () => r({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}/`, close: () => server.close() })),
  );
}

const results = { passed: 0, failed: 0, skipped: 0 };

async function main(): Promise<number> {
  const codeServer = ensureCodeServer((l) => log(l));
  // ACP_REMOTE_VSCODE_NO_BUILD=1 reuses dist/ as it is (quicker when iterating on tests).
  if (!process.env["ACP_REMOTE_VSCODE_NO_BUILD"]) {
    log("building the extension");
    const b = spawnSync(NODE, ["scripts/build.mjs"], { cwd: repo, stdio: "inherit" });
    if (b.status !== 0) throw new Error("the build failed");
  }

  const runDir = mkdtempSync(join(tmpdir(), "acp-vscode-"));
  const workspace = join(runDir, "workspace");
  writeTestWorkspace(workspace, { embeddedDemo: INSTALLED });
  await buildSuite(runDir, INSTALLED ? INSTALLED_SUITE_ENTRY : SUITE_ENTRY);

  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // code-server 4.139 needs Node 24; its launcher runs the first `node` on PATH.
    PATH: `${node24BinDir()}:${process.env["PATH"] ?? ""}`,
    XDG_CONFIG_HOME: join(runDir, "config"),
    XDG_DATA_HOME: join(runDir, "data"),
    XDG_CACHE_HOME: join(runDir, "cache"),
    ACP_REMOTE_DATA_DIR: join(runDir, "acp-data"),
  };
  delete env["ACP_REMOTE_TOKEN"];
  // The extension under development: the source folder, or the empty one beside the installed .vsix.
  const developmentPath = INSTALLED ? installVsix(codeServer, runDir, env, log) : repo;
  let server: ChildProcess | undefined;
  let browser: Browser | undefined;
  let ui: { close(): void } | undefined;
  /** The extension host's console, shown when the run fails. */
  const hostLog: string[] = [];
  let failurePage: Page | undefined;
  try {
    server = spawn(
      codeServer,
      [
        "--config", "/dev/null", "--bind-addr", `127.0.0.1:${port}`, "--auth", "none",
        "--user-data-dir", join(runDir, "ud"), "--extensions-dir", join(runDir, "exts"),
        "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
        "--disable-getting-started-override", "--ignore-last-opened",
        "--vscode-option", "enable-smoke-test-driver", workspace,
      ],
      { env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
    );
    let serverLog = "";
    server.stdout?.on("data", (c: Buffer) => (serverLog += c.toString()));
    server.stderr?.on("data", (c: Buffer) => (serverLog += c.toString()));
    const deadline = Date.now() + STEP_TIMEOUT_MS;
    while (!/HTTP server listening/.test(serverLog)) {
      if (server.exitCode !== null || Date.now() > deadline) throw new Error(`code-server did not start:\n${serverLog}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    log(`code-server on port ${port}`);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    failurePage = page;
    const exited = new Promise<number>((resolveExit) => {
      void page.exposeFunction("codeAutomationExit", (code: number) => resolveExit(code));
    });
    await page.exposeFunction("codeAutomationLog", (type: string, args: unknown[]) => {
      const line = (Array.isArray(args) ? args : [args]).map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ");
      hostLog.push(`${type}: ${line}`);
      for (const l of line.split("\n")) {
        if (/^ok \d+ - .* # SKIP/.test(l)) results.skipped++;
        else if (/^ok \d+ - /.test(l)) results.passed++;
        if (/^not ok \d+ - /.test(l)) results.failed++;
      }
      if (/^(not )?ok \d+|^ {2}|^1\.\./.test(line)) process.stdout.write(`${line}\n`);
    });
    // Screenshots land in docs/images only when asked, so a test run leaves the repository as it was.
    const screenshotDir = process.env["ACP_REMOTE_UPDATE_SCREENSHOTS"] ? join(repo, "docs/images") : join(runDir, "screenshots");
    mkdirSync(screenshotDir, { recursive: true });
    const channel = await serveUi(page, screenshotDir, runDir);
    ui = channel;
    writeFileSync(join(runDir, "ui.json"), JSON.stringify({ url: channel.url }));
    const remote = (p: string): string => `vscode-remote://127.0.0.1:${port}${p}`;
    const payload = JSON.stringify([
      ["extensionDevelopmentPath", remote(developmentPath)],
      ["extensionTestsPath", remote(join(runDir, "suite/index.js"))],
      ["skipWelcome", "true"],
    ]);
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(payload)}`);
    const code = await Promise.race([
      exited,
      new Promise<number>((_, reject) => setTimeout(() => reject(new Error("the extension suite timed out")), RUN_TIMEOUT_MS).unref()),
    ]);
    if (code !== 0 && results.failed === 0) results.failed++;
    return code;
  } catch (err) {
    results.failed++;
    await failurePage?.screenshot({ path: join(runDir, "failure.png") }).catch(() => undefined);
    log(`extension host console (last lines):\n${hostLog.filter((l) => !l.includes("[AgentHost]")).slice(-60).join("\n")}`);
    log(`screenshot of the failure: ${join(runDir, "failure.png")}`);
    throw err;
  } finally {
    writeFileSync(join(runDir, "host.log"), hostLog.join("\n"));
    ui?.close();
    await browser?.close().catch(() => undefined);
    killGroup(server);
    // A failed run keeps its folder: host.log and the screenshots of what failed.
    if (results.failed > 0 || process.env["ACP_REMOTE_KEEP_RUN"]) log(`run folder kept: ${runDir}`);
    else rmSync(runDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => {
    console.log(`${RUN_NAME}: ${results.passed} passed, ${results.failed} failed${results.skipped > 0 ? `, ${results.skipped} skipped` : ""}`);
    process.exit(code === 0 && results.failed === 0 ? 0 : 1);
  },
  (err: unknown) => {
    console.error(`${RUN_NAME}: ${err instanceof Error ? err.message : String(err)}`);
    console.log(`${RUN_NAME}: ${results.passed} passed, ${Math.max(1, results.failed)} failed`);
    process.exit(1);
  },
);
