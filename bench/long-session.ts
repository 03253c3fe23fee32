// Opening a long session on a phone: an `acp-remote serve` child with the
// fixture agent, whose `work` command streams what a coding agent does
// (messages in chunks of 2–20 characters, tool calls with their updates, the
// plan rewritten at every step, permission requests), makes a session of
// --updates updates in --turns turns. Then it measures what that session
// costs: the bytes a live client received, the journal on disk, a whole
// replay (session/load over WebSocket, no pages asked), the first page of a
// paged replay as the web client asks for it (when the server offers pages),
// and the web client opening the session in headless chromium at 390×844
// over a link throttled with `Network.emulateNetworkConditions` (1.6 Mbit/s
// down, 0.75 Mbit/s up, 150 ms round trip): the time until the last words of
// the latest turn are drawn (and whether on screen), and the bytes received
// until then, after a reload (the page's files cached) and on a first visit
// (nothing cached).
//
// Run: node_modules/.bin/node bench/long-session.ts [--updates 50000] [--turns 12] [--runs 3]
//        [--cli PATH/sidecar/cli/main.ts]   another checkout's server and web client (e.g. the code before a change)
//        [--no-pages]                       the page is not told that the server gives pages (its
//                                           replay is whole, compacted): what compaction alone does
// It is not part of `npm run bench`: it compares two versions of one server, not a server with baselines.
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import WebSocket from "ws";
import { DEFAULT_HISTORY_PAGE_TURNS } from "../web/client/limits.ts";
import { spawnProjectServe } from "../test/helpers/serve-project.ts";

const REPO = resolve(import.meta.dirname, "..");
const NODE = process.execPath;
const AGENT = join(REPO, "test/fixtures/agent.ts");
const CHROMIUM = "/usr/bin/chromium";
const TOKEN = "long-session-bench-token-0123456789";
/** The throttled link: Chromium's own units, bytes per second and milliseconds. */
const LINK = { offline: false, latency: 150, downloadThroughput: 1_600_000 / 8, uploadThroughput: 750_000 / 8 };
const PHONE = { width: 390, height: 844 };
/** Longest any one step may take before the run is given up (milliseconds). */
const STEP_TIMEOUT_MS = 300_000;

/** A bare JSON-RPC client over one WebSocket: requests, and every message counted as it comes. */
class Wire {
  readonly #ws: WebSocket;
  readonly #waiting = new Map<number, (message: Record<string, unknown>) => void>();
  #id = 0;
  /** Bytes and count of the session/update notifications received. */
  updates = { count: 0, bytes: 0 };
  onRequest: (message: Record<string, unknown>) => void = () => undefined;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on("message", (data: Buffer) => {
      const message = JSON.parse(data.toString("utf8")) as Record<string, unknown>;
      if (message["method"] === "session/update") {
        this.updates.count++;
        this.updates.bytes += data.byteLength;
      } else if (typeof message["method"] === "string" && "id" in message) {
        this.onRequest(message);
      } else if (typeof message["id"] === "number") {
        this.#waiting.get(message["id"])?.(message);
      }
    });
  }

  static open(url: string): Promise<Wire> {
    const ws = new WebSocket(`${url.replace(/^http/, "ws")}/acp`, { headers: { authorization: `Bearer ${TOKEN}` }, maxPayload: 64 * 1024 * 1024 });
    return new Promise((resolveWire, reject) => {
      ws.once("open", () => resolveWire(new Wire(ws)));
      ws.once("error", reject);
    });
  }

  async request(method: string, params: unknown): Promise<Record<string, unknown>> {
    const id = ++this.#id;
    const answer = new Promise<Record<string, unknown>>((r) => this.#waiting.set(id, r));
    this.#ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    const message = await withTimeout(answer, `${method}`);
    this.#waiting.delete(id);
    if (message["error"] !== undefined) throw new Error(`${method}: ${JSON.stringify(message["error"])}`);
    return message["result"] as Record<string, unknown>;
  }

  respond(id: unknown, result: unknown): void {
    this.#ws.send(JSON.stringify({ jsonrpc: "2.0", id, result }));
  }

  close(): void {
    this.#ws.close();
  }
}

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${STEP_TIMEOUT_MS} ms`)), STEP_TIMEOUT_MS)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A session of `updates` updates of work in `turns` turns; the live updates' count and bytes. */
async function makeSession(url: string, updates: number, turns: number): Promise<{ sessionId: string; live: { count: number; bytes: number } }> {
  const wire = await Wire.open(url);
  try {
    // Every permission request is allowed, as a person would.
    wire.onRequest = (message) => wire.respond(message["id"], { outcome: { outcome: "selected", optionId: "allow_once" } });
    await wire.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const { sessionId } = (await wire.request("session/new", { cwd: "/tmp", mcpServers: [] })) as { sessionId: string };
    for (let turn = 1; turn <= turns; turn++) {
      const share = Math.floor(updates / turns) + (turn <= updates % turns ? 1 : 0);
      await wire.request("session/prompt", { sessionId, prompt: [{ type: "text", text: `work ${share} ${turn}` }] });
    }
    return { sessionId, live: { ...wire.updates } };
  } finally {
    wire.close();
  }
}

/** What one session/load replays over WebSocket (the latest `turns` turns, when asked and offered). */
async function replay(url: string, sessionId: string, turns?: number): Promise<{ count: number; bytes: number; offered: boolean }> {
  const wire = await Wire.open(url);
  try {
    const init = await wire.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const offered = ((init["_meta"] as Record<string, Record<string, unknown>> | undefined)?.["acpRemote"]?.["historyPages"] ?? false) === true;
    if (turns !== undefined && !offered) return { count: 0, bytes: 0, offered };
    const pages = turns === undefined ? {} : { _meta: { acpRemote: { history: { turns } } } };
    await wire.request("session/load", { sessionId, cwd: "/tmp", mcpServers: [], ...pages });
    return { ...wire.updates, offered };
  } finally {
    wire.close();
  }
}

/** The session's journal in the store file: entries and bytes. */
function journalOnDisk(dataDir: string, sessionId: string): { count: number; bytes: number } {
  const { DatabaseSync } = process.getBuiltinModule("node:sqlite");
  const db = new DatabaseSync(join(dataDir, "acp-remote.sqlite"), { readOnly: true });
  try {
    const row = db.prepare("SELECT count(*) AS n, coalesce(sum(length(CAST(entry AS BLOB))), 0) AS bytes FROM hub_journal WHERE session_id = ?").get(sessionId) as { n: number; bytes: number };
    return { count: Number(row.n), bytes: Number(row.bytes) };
  } finally {
    db.close();
  }
}

interface Opened {
  /** From the navigation's start until the last words of the latest turn are drawn (milliseconds). */
  ms: number;
  /** Whether they were on screen then, or the person had to scroll to them. */
  inView: boolean;
  /** Bytes the page received meanwhile: HTTP bodies and headers, WebSocket frames. */
  bytes: number;
}

/** Opens the session in the web client over the throttled link; `reload` reloads a page that has the files cached. */
async function openOnPhone(browser: Browser, url: string, sessionId: string, lastWords: string, how: "reload" | "first visit", pages: boolean): Promise<Opened> {
  const context: BrowserContext = await browser.newContext({ viewport: PHONE, isMobile: true, hasTouch: true });
  try {
    await context.addInitScript((token) => localStorage.setItem("acp-remote.token", token), TOKEN);
    if (!pages) await context.addInitScript(hidePages);
    const page: Page = await context.newPage();
    const route = `${url}/#/s/fixture/${encodeURIComponent(sessionId)}`;
    if (how === "reload") {
      // A visit at full speed first: the page's files are in its cache.
      await page.goto(route);
      await shown(page, lastWords);
    }
    const cdp = await context.newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", LINK);
    // Per request: what came so far, then its total once it finished (a stream never does); WebSocket frames apart.
    const requests = new Map<string, number>();
    let frames = 0;
    cdp.on("Network.dataReceived", (e: { requestId: string; encodedDataLength: number }) => requests.set(e.requestId, (requests.get(e.requestId) ?? 0) + e.encodedDataLength));
    cdp.on("Network.loadingFinished", (e: { requestId: string; encodedDataLength: number }) => requests.set(e.requestId, e.encodedDataLength));
    cdp.on("Network.webSocketFrameReceived", (e: { response: { payloadData: string } }) => (frames += Buffer.byteLength(e.response.payloadData)));
    if (how === "reload") await page.reload({ waitUntil: "commit" });
    else await page.goto(route, { waitUntil: "commit" });
    const { ms, inView } = await shown(page, lastWords);
    return { ms, inView, bytes: frames + [...requests.values()].reduce((a, b) => a + b, 0) };
  } finally {
    await context.close();
  }
}

/** In the page: its WebSockets hide the server's offer of pages from it (`_meta.acpRemote.historyPages`). */
function hidePages(): void {
  // The page's own WebSocket (this file's `WebSocket` is the `ws` package's).
  const page = globalThis as unknown as { WebSocket: new (url: string, protocols?: string | string[]) => EventTarget };
  const Native = page.WebSocket;
  page.WebSocket = class extends Native {
    override addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: boolean | AddEventListenerOptions): void {
      if (type !== "message" || typeof listener !== "function") return super.addEventListener(type, listener, options);
      super.addEventListener(
        type,
        (event: Event) => {
          const data: unknown = (event as MessageEvent).data;
          listener(typeof data === "string" ? new MessageEvent("message", { data: data.replace('"historyPages":true', '"historyPages":false') }) : event);
        },
        options,
      );
    }
  };
}

/** When the last words are drawn, in the page's clock (from its navigation's start), and whether they were on screen. */
async function shown(page: Page, lastWords: string): Promise<{ ms: number; inView: boolean }> {
  const handle = await page.waitForFunction(
    (words) => {
      const message = Array.from(document.querySelectorAll(".sv-agent")).findLast((e) => (e.textContent ?? "").includes(words));
      if (message === undefined) return false;
      const r = message.getBoundingClientRect();
      return r.height > 0 ? { ms: performance.now(), inView: r.bottom > 0 && r.top < innerHeight } : false;
    },
    lastWords,
    { polling: "raf", timeout: STEP_TIMEOUT_MS },
  );
  return (await handle.jsonValue()) as { ms: number; inView: boolean };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const kb = (bytes: number): string => (bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(2)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`);
const spread = (values: number[], unit: (v: number) => string): string => `${unit(median(values))} [${unit(Math.min(...values))}–${unit(Math.max(...values))}]`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { updates: { type: "string" }, turns: { type: "string" }, runs: { type: "string" }, cli: { type: "string" }, "no-pages": { type: "boolean" } },
  });
  const updates = Number(values.updates ?? 50_000);
  const turns = Number(values.turns ?? 12);
  const runs = Number(values.runs ?? 3);
  const cli = resolve(values.cli ?? join(REPO, "sidecar/cli/main.ts"));
  const served = await spawnProjectServe({ cli, token: TOKEN, args: ["--agent", `fixture=${NODE} ${AGENT}`] });
  let browser: Browser | undefined;
  try {
    const started = performance.now();
    const { sessionId, live } = await makeSession(served.url, updates, turns);
    const made = performance.now() - started;
    // Written: a replay flushes the journal first.
    const whole = await replay(served.url, sessionId);
    const disk = journalOnDisk(served.dataDir, sessionId);
    const paged = await replay(served.url, sessionId, DEFAULT_HISTORY_PAGE_TURNS);
    const lastWords = `Done: ${turns}.`;
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"] });
    const results: Record<"reload" | "first visit", Opened[]> = { reload: [], "first visit": [] };
    for (let run = 0; run < runs; run++) {
      for (const how of ["reload", "first visit"] as const) results[how].push(await openOnPhone(browser, served.url, sessionId, lastWords, how, values["no-pages"] !== true));
    }
    const lines = [
      `server: ${cli}${values["no-pages"] === true ? " (the page not told of pages)" : ""}`,
      `session: ${updates.toLocaleString("en")} updates in ${turns} turns (made in ${(made / 1000).toFixed(1)} s)`,
      `live: ${live.count.toLocaleString("en")} session/update, ${kb(live.bytes)}`,
      `journal on disk: ${disk.count.toLocaleString("en")} entries, ${kb(disk.bytes)}`,
      `replay, whole (session/load, WebSocket): ${whole.count.toLocaleString("en")} session/update, ${kb(whole.bytes)}`,
      paged.offered
        ? `replay, its first page as the web client asks (latest ${DEFAULT_HISTORY_PAGE_TURNS} turn${DEFAULT_HISTORY_PAGE_TURNS === 1 ? "" : "s"}): ${paged.count.toLocaleString("en")} session/update, ${kb(paged.bytes)}`
        : "replay in pages: not offered",
      ...(["reload", "first visit"] as const).map(
        (how) =>
          `phone, ${how} (${runs} runs): latest turn drawn after ${spread(results[how].map((r) => r.ms), (v) => `${(v / 1000).toFixed(2)} s`)}` +
          `${results[how].every((r) => r.inView) ? ", on screen" : `, on screen in ${results[how].filter((r) => r.inView).length} of ${runs}`}, ` +
          `received ${spread(results[how].map((r) => r.bytes), kb)}`,
      ),
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    await browser?.close();
    await served.close();
  }
}

await main();
