// The waits of the reconnect loop: each takes back its abort listener and its
// timer when it ends, so a loop of many attempts keeps nothing per attempt.
import { test } from "node:test";
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { Backoff, sleep, withDeadline } from "../../client/backoff.ts";

test("regression: each reconnect wait added an abort listener to the relay's stop signal and never removed it", async () => {
  const stop = new AbortController();
  for (let attempt = 0; attempt < 15; attempt++) await sleep(1, stop.signal);
  assert.equal(getEventListeners(stop.signal, "abort").length, 0);
});

test("a wait ends at once when the signal aborts, and leaves no timer armed", async () => {
  const stop = new AbortController();
  const before = process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
  const waiting = sleep(60_000, stop.signal);
  stop.abort();
  await waiting;
  assert.equal(process.getActiveResourcesInfo().filter((r) => r === "Timeout").length, before);
  assert.equal(getEventListeners(stop.signal, "abort").length, 0);
  await sleep(60_000, stop.signal); // already aborted: no wait
});

test("regression: the initialize deadline's timer stayed armed after the answer came", async () => {
  const before = process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
  assert.equal(await withDeadline(Promise.resolve(7), 60_000, () => new Error("late")), 7);
  await assert.rejects(withDeadline(Promise.reject(new Error("refused")), 60_000, () => new Error("late")), /refused/);
  assert.equal(process.getActiveResourcesInfo().filter((r) => r === "Timeout").length, before);
  await assert.rejects(withDeadline(new Promise(() => {}), 5, () => new Error("no answer within 5 ms")), /no answer within 5 ms/);
});

test("backoff: at once, then doubling from the minimum up to the cap", () => {
  const backoff = new Backoff(250, 1_000);
  assert.equal(backoff.delayMs, 0);
  assert.deepEqual([backoff.next(), backoff.next(), backoff.next(), backoff.next()], [250, 500, 1_000, 1_000]);
});
