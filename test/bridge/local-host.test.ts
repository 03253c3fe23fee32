// LocalHost: ACP fs/* and terminal/* served by the sidecar, confined to the
// session's folders, on a real file system with real processes.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, mkdir, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalHost, type HostScope } from "../../sidecar/bridge/local-host.ts";
import { OutputTail } from "../../sidecar/bridge/local-terminals.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";
import { HostMethod } from "../../protocol/control.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";

let base: string;
let work: string;
let extra: string;
let outside: string;
let scope: HostScope;
const host = new LocalHost({ maxReadFileBytes: 1024, maxPerSession: 3, killGraceMs: 2_000 });
const never = new AbortController().signal;

before(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "acp-local-host-")));
  work = join(base, "work");
  extra = join(base, "extra");
  outside = join(base, "outside");
  await mkdir(work);
  await mkdir(extra);
  await mkdir(outside);
  await writeFile(join(work, "notes.txt"), "one\ntwo\nthree\nfour\nfive");
  await writeFile(join(extra, "more.txt"), "from an additional directory");
  await writeFile(join(outside, "secret.txt"), "secret");
  await writeFile(join(work, "big.txt"), "x".repeat(2048));
  await symlink(join(outside, "secret.txt"), join(work, "link-to-secret"));
  await symlink(outside, join(work, "link-to-outside"));
  await symlink(join(outside, "missing.txt"), join(work, "dangling"));
  await symlink(join(work, "notes.txt"), join(work, "link-inside"));
  scope = { sessionId: "s1", roots: [work, extra] };
});

after(async () => {
  await host.dispose();
  await rm(base, { recursive: true, force: true });
});

function call(method: string, params: Record<string, unknown>, s: HostScope = scope, signal = never): Promise<unknown> {
  return host.handle(method, { sessionId: s.sessionId, ...params }, s, signal);
}

async function rejectsWith(promise: Promise<unknown>, code: number, message: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof RpcFailure, `not an RpcFailure: ${String(error)}`);
    assert.equal(error.code, code, error.message);
    assert.match(error.message, message);
    return true;
  });
}

/** True when the process is gone or a zombie (a zombie has ended; only its parent has not reaped it). */
function ended(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

async function waitFor(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("fs/read_text_file", () => {
  test("a file inside the cwd is read whole", async () => {
    assert.deepEqual(await call(HostMethod.readTextFile, { path: join(work, "notes.txt") }), { content: "one\ntwo\nthree\nfour\nfive" });
  });
  test("line and limit: lines 2..3", async () => {
    assert.deepEqual(await call(HostMethod.readTextFile, { path: join(work, "notes.txt"), line: 2, limit: 2 }), { content: "two\nthree" });
  });
  test("line alone: from line 4 to the end", async () => {
    assert.deepEqual(await call(HostMethod.readTextFile, { path: join(work, "notes.txt"), line: 4 }), { content: "four\nfive" });
  });
  test("a file in an additionalDirectory is read", async () => {
    assert.deepEqual(await call(HostMethod.readTextFile, { path: join(extra, "more.txt") }), { content: "from an additional directory" });
  });
  test("a symlink that stays inside is followed", async () => {
    assert.deepEqual(await call(HostMethod.readTextFile, { path: join(work, "link-inside"), limit: 1 }), { content: "one" });
  });
  test("a relative path is rejected (ACP paths are absolute)", async () => {
    await rejectsWith(call(HostMethod.readTextFile, { path: "notes.txt" }), ErrorCode.InvalidParams, /must be an absolute path/);
  });
  test("`..` out of the cwd is refused", async () => {
    await rejectsWith(call(HostMethod.readTextFile, { path: join(work, "..", "outside", "secret.txt") }), ErrorCode.InvalidParams, /is outside the session's folders/);
  });
  test("a symlink to a file outside is refused", async () => {
    await rejectsWith(call(HostMethod.readTextFile, { path: join(work, "link-to-secret") }), ErrorCode.InvalidParams, /is outside the session's folders/);
  });
  test("a path through a symlinked folder outside is refused", async () => {
    await rejectsWith(call(HostMethod.readTextFile, { path: join(work, "link-to-outside", "secret.txt") }), ErrorCode.InvalidParams, /is outside/);
  });
  test("a missing file inside answers resource not found", async () => {
    await rejectsWith(call(HostMethod.readTextFile, { path: join(work, "nope.txt") }), ErrorCode.ResourceNotFound, /does not exist/);
  });
  test("a missing file outside is refused as outside, not reported missing", async () => {
    await rejectsWith(call(HostMethod.readTextFile, { path: join(outside, "nope.txt") }), ErrorCode.InvalidParams, /is outside/);
  });
  test("a file larger than the limit is rejected", async () => {
    await rejectsWith(call(HostMethod.readTextFile, { path: join(work, "big.txt") }), ErrorCode.InvalidParams, /2048 bytes, larger than the 1024 bytes/);
  });
  test("a bad line number is rejected", async () => {
    await rejectsWith(call(HostMethod.readTextFile, { path: join(work, "notes.txt"), line: 0 }), ErrorCode.InvalidParams, /line must be an integer of at least 1/);
  });
});

describe("fs/write_text_file", () => {
  test("writes a file and creates its parent folders", async () => {
    const path = join(work, "new", "deeper", "file.txt");
    assert.deepEqual(await call(HostMethod.writeTextFile, { path, content: "héllo" }), {});
    assert.equal(await readFile(path, "utf8"), "héllo");
  });
  test("overwrites an existing file", async () => {
    const path = join(work, "overwrite.txt");
    await call(HostMethod.writeTextFile, { path, content: "first" });
    await call(HostMethod.writeTextFile, { path, content: "second" });
    assert.equal(await readFile(path, "utf8"), "second");
  });
  test("`..` out of the cwd is refused and nothing is written", async () => {
    const path = join(work, "new-dir", "..", "..", "outside", "planted.txt");
    await rejectsWith(call(HostMethod.writeTextFile, { path, content: "x" }), ErrorCode.InvalidParams, /is outside/);
    assert.equal(existsSync(join(outside, "planted.txt")), false);
  });
  test("through a symlinked folder outside is refused", async () => {
    await rejectsWith(call(HostMethod.writeTextFile, { path: join(work, "link-to-outside", "planted.txt"), content: "x" }), ErrorCode.InvalidParams, /is outside/);
    assert.equal(existsSync(join(outside, "planted.txt")), false);
  });
  test("through a dangling symlink is refused", async () => {
    await rejectsWith(call(HostMethod.writeTextFile, { path: join(work, "dangling"), content: "x" }), ErrorCode.InvalidParams, /symbolic link whose target does not exist/);
    assert.equal(existsSync(join(outside, "missing.txt")), false);
  });
  test("content that is not a string is rejected", async () => {
    await rejectsWith(call(HostMethod.writeTextFile, { path: join(work, "x.txt"), content: 5 }), ErrorCode.InvalidParams, /content must be a string/);
  });
});

describe("terminal/*", () => {
  test("create, wait_for_exit, output, release: exit code and output of a command", async () => {
    const { terminalId } = (await call(HostMethod.terminalCreate, { command: "/bin/sh", args: ["-c", "echo out; echo err >&2; exit 3"] })) as { terminalId: string };
    assert.deepEqual(await call(HostMethod.terminalWaitForExit, { terminalId }), { exitCode: 3, signal: null });
    const output = (await call(HostMethod.terminalOutput, { terminalId })) as { output: string; truncated: boolean; exitStatus: unknown };
    assert.equal(output.output.split("\n").sort().join(","), ",err,out");
    assert.equal(output.truncated, false);
    assert.deepEqual(output.exitStatus, { exitCode: 3, signal: null });
    assert.deepEqual(await call(HostMethod.terminalRelease, { terminalId }), {});
    await rejectsWith(call(HostMethod.terminalOutput, { terminalId }), ErrorCode.ResourceNotFound, /unknown terminal/);
  });

  test("cwd defaults to the session cwd; env entries are passed", async () => {
    const { terminalId } = (await call(HostMethod.terminalCreate, { command: "/bin/sh", args: ["-c", 'pwd; echo "$GREETING"'], env: [{ name: "GREETING", value: "bonjour" }] })) as { terminalId: string };
    await call(HostMethod.terminalWaitForExit, { terminalId });
    assert.equal(((await call(HostMethod.terminalOutput, { terminalId })) as { output: string }).output, `${work}\nbonjour\n`);
    await call(HostMethod.terminalRelease, { terminalId });
  });

  test("outputByteLimit keeps the tail, sets truncated, and cuts at a character boundary", async () => {
    // "é" is 2 bytes: 10 of them are 20 bytes; a 5-byte tail starts inside a character.
    const { terminalId } = (await call(HostMethod.terminalCreate, { command: "/bin/sh", args: ["-c", "printf 'abcdéééééééééé'"], outputByteLimit: 5 })) as { terminalId: string };
    await call(HostMethod.terminalWaitForExit, { terminalId });
    assert.deepEqual(await call(HostMethod.terminalOutput, { terminalId }), { output: "éé", truncated: true, exitStatus: { exitCode: 0, signal: null } });
    await call(HostMethod.terminalRelease, { terminalId });
  });

  test("kill ends the command; the terminal keeps its output and exit status", async () => {
    const { terminalId } = (await call(HostMethod.terminalCreate, { command: "/bin/sh", args: ["-c", "echo started; exec sleep 600"] })) as { terminalId: string };
    assert.deepEqual(await call(HostMethod.terminalKill, { terminalId }), {});
    const output = (await call(HostMethod.terminalOutput, { terminalId })) as { output: string; exitStatus: { exitCode: number | null; signal: string | null } };
    assert.deepEqual(output.exitStatus, { exitCode: null, signal: "SIGTERM" });
    await call(HostMethod.terminalRelease, { terminalId });
  });

  test("release kills the command's whole process group", async () => {
    const pidFile = join(work, "bg.pid");
    const { terminalId } = (await call(HostMethod.terminalCreate, { command: "/bin/sh", args: ["-c", `sleep 600 & echo $! > ${pidFile}; wait`] })) as { terminalId: string };
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"));
    const background = Number(readFileSync(pidFile, "utf8"));
    assert.equal(ended(background), false);
    await call(HostMethod.terminalRelease, { terminalId });
    await waitFor(() => ended(background));
  });

  test("releaseSession kills the session's terminals", async () => {
    const s2: HostScope = { sessionId: "s2", roots: [work] };
    const pidFile = join(work, "s2.pid");
    const { terminalId } = (await call(HostMethod.terminalCreate, { command: "/bin/sh", args: ["-c", `echo $$ > ${pidFile}; exec sleep 600`] }, s2)) as { terminalId: string };
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"));
    const pid = Number(readFileSync(pidFile, "utf8"));
    host.releaseSession("s2");
    await waitFor(() => ended(pid));
    await rejectsWith(call(HostMethod.terminalOutput, { terminalId }, s2), ErrorCode.ResourceNotFound, /unknown terminal/);
  });

  test("wait_for_exit whose request is cancelled answers -32800", async () => {
    const { terminalId } = (await call(HostMethod.terminalCreate, { command: "sleep", args: ["600"] })) as { terminalId: string };
    const controller = new AbortController();
    const waiting = call(HostMethod.terminalWaitForExit, { terminalId }, scope, controller.signal);
    controller.abort();
    await rejectsWith(waiting, ErrorCode.RequestCancelled, /cancelled/);
    await call(HostMethod.terminalRelease, { terminalId });
  });

  test("another session's terminal is unknown", async () => {
    const { terminalId } = (await call(HostMethod.terminalCreate, { command: "true" })) as { terminalId: string };
    await rejectsWith(call(HostMethod.terminalOutput, { terminalId }, { sessionId: "other", roots: [work] }), ErrorCode.ResourceNotFound, /unknown terminal/);
    await call(HostMethod.terminalRelease, { terminalId });
  });

  test("a cwd outside the session's folders is refused", async () => {
    await rejectsWith(call(HostMethod.terminalCreate, { command: "true", cwd: outside }), ErrorCode.InvalidParams, /is outside/);
  });

  test("a command that does not exist is refused with a clear message", async () => {
    await rejectsWith(call(HostMethod.terminalCreate, { command: "no-such-command-xyz" }), ErrorCode.InvalidParams, /cannot run "no-such-command-xyz": command not found/);
  });

  test("at most maxPerSession terminals per session", async () => {
    const s3: HostScope = { sessionId: "s3", roots: [work] };
    for (let i = 0; i < 3; i++) await call(HostMethod.terminalCreate, { command: "sleep", args: ["600"] }, s3);
    await rejectsWith(call(HostMethod.terminalCreate, { command: "sleep", args: ["600"] }, s3), ErrorCode.InvalidParams, /has 3 terminals open, the most allowed/);
    host.releaseSession("s3");
  });
});

describe("LocalHost", () => {
  test("a method it does not serve answers -32601", async () => {
    await rejectsWith(call("session/request_permission", {}), ErrorCode.MethodNotFound, /method not found: session\/request_permission/);
  });
});

describe("OutputTail", () => {
  test("a 4-byte character split by the limit is left out whole", () => {
    const tail = new OutputTail(4);
    tail.push(Buffer.from("ab😀cd", "utf8")); // 2 + 4 + 2 bytes; the tail keeps 2 bytes of 😀
    assert.deepEqual([tail.text(), tail.truncated], ["cd", true]);
  });
  test("a character still being written is not shown half", () => {
    const tail = new OutputTail(100);
    const bytes = Buffer.from("ok😀", "utf8");
    tail.push(bytes.subarray(0, 4));
    assert.equal(tail.text(), "ok");
    tail.push(bytes.subarray(4));
    assert.deepEqual([tail.text(), tail.truncated], ["ok😀", false]);
  });
});
