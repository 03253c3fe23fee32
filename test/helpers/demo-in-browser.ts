// What the browser tests of the web client start from: the client built into
// dist/, served by `acp-remote serve` with the demo agent
// (test/web-client/serve-demo.ts), and a headless chromium to open it in.
import type { Browser } from "playwright-core";
import { buildToDist } from "../web-client/build.ts";
import { launch } from "../web-client/browser.ts";
import { spawnDemoServe, type DemoServe } from "../web-client/serve-demo.ts";

export async function demoInBrowser(options: Parameters<typeof spawnDemoServe>[0]): Promise<{ server: DemoServe; browser: Browser }> {
  await buildToDist();
  const server = await spawnDemoServe(options);
  try {
    return { server, browser: await launch() };
  } catch (error) {
    // No browser: the caller gets no server to close either.
    await server.close();
    throw error;
  }
}
