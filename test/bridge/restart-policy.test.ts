// The restart rule shared by the agent supervisor and the editor's sidecar
// supervision: at most N restarts within a window, with a doubling delay.
import { test } from "node:test";
import assert from "node:assert/strict";
import { RestartPolicy } from "../../common/restart-policy.ts";

test("restarts up to maxRestarts crashes within the window, then gives up", () => {
  const policy = new RestartPolicy({ maxRestarts: 3, windowMs: 1_000, minDelayMs: 100, maxDelayMs: 10_000 });
  assert.deepEqual(policy.onCrash(0), { restart: true, delayMs: 100 });
  assert.deepEqual(policy.onCrash(10), { restart: true, delayMs: 200 });
  assert.deepEqual(policy.onCrash(20), { restart: true, delayMs: 400 });
  assert.deepEqual(policy.onCrash(30), { restart: false, crashes: 4 });
});

test("crashes older than the window no longer count", () => {
  const policy = new RestartPolicy({ maxRestarts: 2, windowMs: 1_000, minDelayMs: 100, maxDelayMs: 10_000 });
  policy.onCrash(0);
  policy.onCrash(500);
  assert.deepEqual(policy.onCrash(1_001), { restart: true, delayMs: 200 }, "the crash at 0 left the window");
  assert.deepEqual(policy.onCrash(1_200), { restart: false, crashes: 3 });
  assert.deepEqual(policy.onCrash(2_600), { restart: true, delayMs: 100 }, "every earlier crash left the window");
});

test("the delay doubles up to maxDelayMs", () => {
  const policy = new RestartPolicy({ maxRestarts: 10, windowMs: 60_000, minDelayMs: 100, maxDelayMs: 500 });
  const delays = Array.from({ length: 5 }, (_, i) => {
    const decision = policy.onCrash(i);
    assert.equal(decision.restart, true);
    return decision.restart ? decision.delayMs : -1;
  });
  assert.deepEqual(delays, [100, 200, 400, 500, 500]);
});

test("without a minimum delay the restart is immediate", () => {
  const policy = new RestartPolicy({ maxRestarts: 1, windowMs: 60_000 });
  assert.deepEqual(policy.onCrash(0), { restart: true, delayMs: 0 });
  assert.deepEqual(policy.onCrash(1), { restart: false, crashes: 2 });
});

test("maxRestarts 0 never restarts; reset forgets the crashes", () => {
  assert.deepEqual(new RestartPolicy({ maxRestarts: 0, windowMs: 1_000 }).onCrash(0), { restart: false, crashes: 1 });
  const policy = new RestartPolicy({ maxRestarts: 1, windowMs: 1_000, minDelayMs: 5 });
  policy.onCrash(0);
  policy.reset();
  assert.deepEqual(policy.onCrash(1), { restart: true, delayMs: 5 });
});

test("bad options are refused with a clear error", () => {
  assert.throws(() => new RestartPolicy({ maxRestarts: -1, windowMs: 1_000 }), /maxRestarts must be an integer >= 0, got -1/);
  assert.throws(() => new RestartPolicy({ maxRestarts: 1, windowMs: Number.NaN }), /windowMs must be >= 0, got NaN/);
});
