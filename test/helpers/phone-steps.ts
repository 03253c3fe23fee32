// What a person does on the web client's screens, as steps a test takes on a
// page: start a session from the list, send a prompt from the composer.
import type { Page } from "playwright-core";

/** Starts a session of the demo agent from the list; resolves with its id once the session screen is connected. */
export async function startSession(page: Page): Promise<string> {
  await page.locator(".wc-new button[type=submit]").click();
  await page.locator('.sv-root[data-connection="connected"]').waitFor();
  await page.waitForURL(/#\/s\/demo\/[^/]+$/);
  return decodeURIComponent(page.url().split("/").pop() ?? "");
}

/** Types `text` in the composer and sends it with Enter. */
export async function send(page: Page, text: string): Promise<void> {
  await page.locator(".sv-input").fill(text);
  await page.locator(".sv-input").press("Enter");
}
