// ServerLifecycle: the order of starts and stops of the editor's sidecar runs,
// with real child processes standing for the sidecar (the LanguageClient
// itself needs a running VS Code; the extension suite covers it there).
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { after, test } from "node:test";
import { ServerLifecycle, type ServerRun } from "../../extension/server-lifecycle.ts";

/** Every process a test started, to count the live ones and to clean up. */
const started: ChildProcess[] = [];
after(() => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

const alive = (): number => started.filter((c) => c.exitCode === null && c.signalCode === null).length;

class ProcessRun implements ServerRun {
  readonly child: ChildProcess;
  constructor(child: ChildProcess) {
    this.child = child;
  }
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, "exit");
    this.child.kill("SIGTERM");
    await exited;
  }
}

/** Launches like the editor does: an await first (the token from the secret storage), then a process. */
function processLauncher(): { launch: () => Promise<ProcessRun>; launches: () => number } {
  let launches = 0;
  return {
    launches: () => launches,
    launch: async () => {
      launches++;
      await new Promise((resolve) => setImmediate(resolve));
      const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1 << 30)"], { stdio: "ignore" });
      started.push(child);
      await once(child, "spawn");
      return new ProcessRun(child);
    },
  };
}

test("regression: a start while the auto-start is in progress joins it (one client, one sidecar) instead of leaking a second", async () => {
  const launcher = processLauncher();
  const lifecycle = new ServerLifecycle(launcher.launch);
  const before = alive();
  const [auto, command] = await Promise.all([lifecycle.start(), lifecycle.start()]);
  assert.equal(launcher.launches(), 1);
  assert.ok(auto);
  assert.equal(command, auto);
  assert.equal(lifecycle.current, auto);
  assert.equal(alive() - before, 1);
  await lifecycle.stop();
  assert.equal(alive(), before);
});

test("ServerLifecycle | a start while running answers the current run", async () => {
  const launcher = processLauncher();
  const lifecycle = new ServerLifecycle(launcher.launch);
  const first = await lifecycle.start();
  assert.equal(await lifecycle.start(), first);
  assert.equal(launcher.launches(), 1);
  await lifecycle.stop();
});

test("ServerLifecycle | a stop during a start ends the run that start made", async () => {
  const launcher = processLauncher();
  const lifecycle = new ServerLifecycle(launcher.launch);
  const starting = lifecycle.start();
  const stopping = lifecycle.stop();
  const run = await starting;
  await stopping;
  assert.ok(run);
  assert.notEqual(run.child.exitCode ?? run.child.signalCode, null, "the process was ended");
  assert.equal(lifecycle.current, undefined);
});

test("ServerLifecycle | a start during a stop launches only after the old process is gone", async () => {
  const launcher = processLauncher();
  const lifecycle = new ServerLifecycle(async () => {
    assert.equal(alive(), 0, "no sidecar of an earlier run is alive when the next one launches");
    return launcher.launch();
  });
  const first = await lifecycle.start();
  const stopping = lifecycle.stop();
  const second = await lifecycle.start();
  await stopping;
  assert.ok(first && second);
  assert.notEqual(second, first);
  assert.equal(lifecycle.current, second);
  assert.equal(alive(), 1);
  // A stop called while a start waits on a stop still ends that start's run.
  await lifecycle.stop();
  assert.equal(alive(), 0);
});

test("ServerLifecycle | a run that did not start leaves nothing current; the next start launches again", async () => {
  let launches = 0;
  const lifecycle = new ServerLifecycle<ProcessRun>(async () => {
    launches++;
    return undefined;
  });
  assert.equal(await lifecycle.start(), undefined);
  assert.equal(lifecycle.current, undefined);
  await lifecycle.start();
  assert.equal(launches, 2);
});

test("ServerLifecycle | a run that ended by itself is forgotten, so a start launches a new one", async () => {
  const launcher = processLauncher();
  const lifecycle = new ServerLifecycle(launcher.launch);
  const run = await lifecycle.start();
  assert.ok(run);
  await run.stop();
  lifecycle.ended(run);
  assert.equal(lifecycle.current, undefined);
  const next = await lifecycle.start();
  assert.notEqual(next, run);
  assert.equal(launcher.launches(), 2);
  await lifecycle.stop();
});
