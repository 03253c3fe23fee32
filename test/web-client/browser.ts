// Debian's chromium, headless, through playwright-core: one browser per test
// file, a fresh context (its own storage) per scenario, each page watched for
// CSP violations and for requests to any other origin.
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { CHROMIUM } from "../web/page.ts";

export const PHONE = { width: 390, height: 844 };

/** `args` are added to the usual flags (a host resolver rule, a trusted key). */
export async function launch(args: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", ...args],
  });
}

export interface Phone {
  context: BrowserContext;
  page: Page;
  /** CSP violations reported in the page so far. */
  violations(): Promise<string[]>;
  /** Requests the page made to another origin than `origin`. */
  foreign: string[];
  close(): Promise<void>;
}

/** A new context at phone size; `init` runs in the page before its scripts (e.g. to take WebSocket away). */
export async function openPhone(browser: Browser, origin: string, options: { colorScheme?: "light" | "dark"; init?: () => void } = {}): Promise<Phone> {
  const context = await browser.newContext({ viewport: PHONE, colorScheme: options.colorScheme ?? "light", isMobile: true, hasTouch: true });
  await context.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { cspViolations: string[] }).cspViolations = seen;
    document.addEventListener("securitypolicyviolation", (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  if (options.init) await context.addInitScript(options.init);
  const foreign: string[] = [];
  context.on("request", (request) => {
    const url = new URL(request.url());
    if (url.origin !== origin && `${url.protocol === "ws:" ? "http:" : "https:"}//${url.host}` !== origin && url.protocol !== "data:") foreign.push(request.url());
  });
  const page = await context.newPage();
  return {
    context,
    page,
    foreign,
    violations: () => page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations),
    close: () => context.close(),
  };
}
