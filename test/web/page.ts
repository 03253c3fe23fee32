// A session view page for tests and the benchmark: bundles web/session-view
// and its harness with esbuild into a temporary folder, serves them from a
// real node:http server on port 0 under a strict Content-Security-Policy, and
// drives Debian's chromium headless through playwright-core with a fresh
// profile. close() removes the folders and stops the browser and the server.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import type { SessionNotification } from "@agentclientprotocol/sdk";

export const CHROMIUM = "/usr/bin/chromium";
const REPO = resolve(import.meta.dirname, "../..");

/** Scripts only from the page's own origin (no inline, no eval), styles only from the bundle's CSS file. */
export const STRICT_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Session</title><link rel="stylesheet" href="/harness.css"><link rel="stylesheet" href="/page.css">
<script type="module" src="/harness.js"></script></head>
<body><div id="root"></div></body></html>`;
const PAGE_CSS = "html, body, #root { height: 100%; margin: 0; }";

const TYPES: Record<string, string> = { js: "text/javascript", css: "text/css", map: "application/json" };

export interface ViewPage {
  page: Page;
  url: string;
  /** Opens a new page on the view (e.g. with another viewport or colour scheme; `host: "editor"`: a host that opens files and diffs). */
  open(options?: { width?: number; height?: number; colorScheme?: "light" | "dark"; host?: "editor" }): Promise<Page>;
  close(): Promise<void>;
}

export async function openViewPage(): Promise<ViewPage> {
  const outdir = mkdtempSync(join(tmpdir(), "acp-remote-web-"));
  const profile = mkdtempSync(join(tmpdir(), "acp-remote-chromium-"));
  let server: Server | undefined;
  let context: BrowserContext | undefined;
  try {
    await build({
      absWorkingDir: REPO,
      bundle: true,
      entryPoints: { "session-view": "web/session-view/index.ts", harness: "web/harness/main.ts" },
      outdir,
      platform: "browser",
      format: "esm",
      target: "es2022",
      logLevel: "warning",
    });
    server = createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      res.setHeader("Content-Security-Policy", STRICT_CSP);
      if (path === "/") {
        res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" }).end(PAGE);
      } else if (path === "/page.css") {
        res.writeHead(200, { "Content-Type": "text/css" }).end(PAGE_CSS);
      } else if (/^\/[\w-]+\.(js|css)$/.test(path)) {
        try {
          const body = readFileSync(join(outdir, path.slice(1)));
          res.writeHead(200, { "Content-Type": TYPES[path.split(".").pop()!]! }).end(body);
        } catch {
          res.writeHead(404).end();
        }
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
    const address = server.address();
    const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/`;
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      viewport: { width: 390, height: 844 },
    });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: url.slice(0, -1) });
    const ctx = context;
    const open = async (options: { width?: number; height?: number; colorScheme?: "light" | "dark"; host?: "editor" } = {}): Promise<Page> => {
      const page = await ctx.newPage();
      await page.setViewportSize({ width: options.width ?? 390, height: options.height ?? 844 });
      if (options.colorScheme) await page.emulateMedia({ colorScheme: options.colorScheme });
      await page.goto(options.host ? `${url}?host=${options.host}` : url);
      await page.waitForFunction(() => "sv" in window);
      return page;
    };
    const page = await open();
    const srv = server;
    return {
      page,
      url,
      open,
      async close() {
        await ctx.close().catch(() => undefined);
        await new Promise<void>((r) => srv.close(() => r()));
        rmSync(outdir, { recursive: true, force: true });
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await context?.close().catch(() => undefined);
    server?.close();
    rmSync(outdir, { recursive: true, force: true });
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
}

/** Feeds notifications to the view of `page`, then waits for the frame that renders them. */
export async function feed(page: Page, notifications: SessionNotification[]): Promise<void> {
  await page.evaluate((list) => {
    const { view } = (window as unknown as { sv: { view: { update(n: unknown): void } } }).sv;
    for (const n of list) view.update(n);
  }, notifications);
  await nextFrame(page);
}

/** Most frames `settled` waits for the transcript to stop changing. */
export const DEFAULT_SETTLE_MAX_FRAMES = 240;

/**
 * Waits until the transcript's scroller is at rest: the same height and position over three frames in a row.
 * What the view draws lands over a few frames (a slow render is put off, a block comes on screen and is
 * drawn at its real size a frame later), more of them on a busy machine; a person sees where it comes to rest.
 */
export async function settled(page: Page): Promise<void> {
  await page.evaluate(async (max) => {
    let box = document.querySelector("[role=log]");
    while (box && !/auto|scroll/.test(getComputedStyle(box).overflowY)) box = box.parentElement;
    const frame = () => new Promise((r) => requestAnimationFrame(r));
    let last = "";
    for (let frames = 0, still = 0; still < 3; frames++) {
      if (frames >= max) throw new Error(`the transcript did not come to rest in ${max} frames`);
      await frame();
      const now = box ? `${box.scrollHeight} ${box.scrollTop}` : "";
      still = now === last ? still + 1 : 0;
      last = now;
    }
  }, DEFAULT_SETTLE_MAX_FRAMES);
}

/** Waits for two animation frames (the view renders streamed text once a frame). */
export async function nextFrame(page: Page): Promise<void> {
  await page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
}

/** Calls one SessionView method in the page. */
export async function call(page: Page, method: string, ...args: unknown[]): Promise<void> {
  await page.evaluate(
    ([m, a]) => {
      const { view } = (window as unknown as { sv: { view: Record<string, (...x: unknown[]) => void> } }).sv;
      view[m as string]!(...(a as unknown[]));
    },
    [method, args] as const,
  );
  await nextFrame(page);
}

export type HostCall = { method: string; args: unknown[] };

/** What the view asked of its host so far. */
export async function hostCalls(page: Page): Promise<HostCall[]> {
  return page.evaluate(() => (window as unknown as { sv: { calls: HostCall[] } }).sv.calls);
}

export async function cspViolations(page: Page): Promise<string[]> {
  return page.evaluate(() => (window as unknown as { sv: { violations: string[] } }).sv.violations);
}
