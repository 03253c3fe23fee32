// How long a waiting permission request takes to leave the server as a
// notification: from the moment the hub has the agent's
// `session/request_permission` to the moment the notification's request is
// whole at the receiving end, on loopback, for both channels:
//   - Web Push to one subscribed device, at the push service stand-in of the
//     tests (test/helpers/push-service.ts: HTTPS, the VAPID JWT checked, the
//     aes128gcm payload decrypted), reached through a keep-alive HTTPS agent
//     as Node's global agent does;
//   - ntfy, at the ntfy stand-in (plain HTTP).
// One `serve` in this process on the embedded store, the fixture agent, one
// client (that shows no page, so every request notifies). Each round is one
// turn with one request, answered by the client once both notifications came.
//
//   node bench/notify-latency.ts [--requests=N] [--warmup=N]
import { mkdtempSync, rmSync } from "node:fs";
import { Agent } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Acp, AcpExt } from "../protocol/acp.ts";
import type { NotificationPayload } from "../protocol/notify.ts";
import { AcpPeer } from "../test/helpers/acp-peer.ts";
import { startNtfyServer } from "../test/helpers/ntfy-server.ts";
import { startPushService } from "../test/helpers/push-service.ts";
import { serveFixtureAgent } from "../test/helpers/sidecar-server.ts";
import { quantile } from "./stats.ts";

const { values } = parseArgs({ options: { requests: { type: "string", default: "300" }, warmup: { type: "string", default: "30" } } });
const REQUESTS = Number(values.requests);
const WARMUP = Number(values.warmup);
const MAIN = "notify-bench-main-token-0123456789";

const dir = mkdtempSync(join(tmpdir(), "acp-remote-notify-bench-"));
const push = await startPushService();
const ntfy = await startNtfyServer();
const server = await serveFixtureAgent({
  tokens: [MAIN],
  dataDir: join(dir, "data"),
  notify: { ntfy: `ntfy:${ntfy.url}/bench`, pushAgent: new Agent({ ca: push.ca, keepAlive: true }) },
});
const peers: AcpPeer[] = [];
try {
  // When the hub had each request: the notice it raises as it opens.
  const opened = new Map<string, number>();
  server.hub.notices.onNotice((notice) => {
    if (notice.kind === "permission") opened.set(notice.permission.permissionId, performance.now());
  });
  const { token } = await server.devices.pair("Bench phone");
  const phone = await AcpPeer.open(server.url, token);
  peers.push(phone);
  const key = ((phone.initialized?.["_meta"] as Record<string, unknown>)[AcpExt.metaKey] as Record<string, { applicationServerKey: string }>)[AcpExt.webPush]!;
  const subscription = push.subscribe(key.applicationServerKey);
  await phone.request(AcpExt.pushSubscribe, { subscription });
  const laptop = await AcpPeer.open(server.url, MAIN);
  peers.push(laptop);
  const { sessionId } = (await laptop.request(Acp.agent.session.new, { cwd: dir, mcpServers: [] })) as { sessionId: string };

  const webPush: number[] = [];
  const seen = new Set<unknown>();
  const viaNtfy: number[] = [];
  const answered = new Set<string>();
  for (let round = 0; round < WARMUP + REQUESTS; round++) {
    const pushesBefore = push.messages.length;
    const ntfyBefore = ntfy.published.length;
    const turn = laptop.request(Acp.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "asks 1 bench.txt" }] });
    const request = await laptop.waitFor((m) => m["method"] === Acp.client.session.requestPermission && !answered.has(String(m["id"])), "the request");
    const id = String(request["id"]);
    answered.add(id);
    // Both notifications of this request (the previous turn's end may come first: it is skipped).
    const pushed = await next(pushesBefore, (count) => push.waitFor(count), () => push.messages.slice(pushesBefore).find((m) => (m.payload as NotificationPayload).requestId === id));
    const published = await next(ntfyBefore, (count) => ntfy.waitFor(count), () => ntfy.published.slice(ntfyBefore).find((p) => p.message["title"] === "Edit bench.txt:1" && !seen.has(p)));
    seen.add(published);
    laptop.respond(request["id"], { outcome: { outcome: "selected", optionId: "allow_once" } });
    await turn;
    const start = opened.get(id);
    if (round >= WARMUP && start !== undefined) {
      webPush.push(pushed.receivedAt - start);
      viaNtfy.push(published.receivedAt - start);
    }
  }
  const row = (name: string, samples: number[]): string =>
    `${name.padEnd(10)} p50 ${quantile(samples, 0.5).toFixed(2)} ms   p99 ${quantile(samples, 0.99).toFixed(2)} ms   min ${Math.min(...samples).toFixed(2)}   max ${Math.max(...samples).toFixed(2)}   (${samples.length} requests)`;
  console.log(`permission request at the hub → notification at the receiving end, ${REQUESTS} requests after ${WARMUP} to warm up`);
  console.log(row("Web Push", webPush));
  console.log(row("ntfy", viaNtfy));
  if (push.refusals.length > 0) throw new Error(`the push service refused: ${push.refusals.join("; ")}`);
} finally {
  for (const peer of peers) await peer.close();
  await server.close();
  await push.close();
  await ntfy.close();
  rmSync(dir, { recursive: true, force: true });
}

/** What `find` finds once the stand-in has `before + n` messages, for the smallest such n. */
async function next<T>(before: number, waitFor: (count: number) => Promise<unknown>, find: () => T | undefined): Promise<T> {
  for (let count = before + 1; ; count++) {
    await waitFor(count);
    const found = find();
    if (found !== undefined) return found;
  }
}
