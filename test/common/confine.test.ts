// One confinement rule for both hosts of fs/* and terminal/*: the table below
// runs against the sidecar's own host (LocalHost, answering RpcFailures) and
// against the rule the editor applies (confinedPath, answering the language
// client's ResponseErrors), on a real file system with real symlinks.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ResponseError } from "vscode-jsonrpc/node";
import { confinedPath, type PathUse } from "../../extension/host/confined-path.ts";
import { HostMethod } from "../../protocol/control.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { LocalHost } from "../../sidecar/bridge/local-host.ts";
import { RpcFailure } from "../../common/rpc-failure.ts";

let base = "";
let work = "";
let outside = "";

before(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), "acp-confine-")));
  work = join(base, "work");
  outside = join(base, "outside");
  await mkdir(work);
  await mkdir(outside);
  await writeFile(join(work, "notes.txt"), "inside");
  await writeFile(join(outside, "secret.txt"), "secret");
  await mkdir(join(work, "..cache"));
  await writeFile(join(work, "..cache", "entry.txt"), "cached");
  await writeFile(join(work, "..notes"), "two dots, then a name");
  await symlink(join(outside, "secret.txt"), join(work, "link-to-secret"));
  await symlink(outside, join(work, "link-to-outside"));
  await symlink(join(outside, "missing.txt"), join(work, "dangling"));
  await symlink(join(work, "notes.txt"), join(work, "link-inside"));
});

after(async () => {
  await rm(base, { recursive: true, force: true });
});

/** A path to check, whether it must exist (a read) or may be created (a write), and the answer: the path or an error code. */
interface Row {
  name: string;
  use: PathUse;
  path: () => string;
  expect: { ok: () => string } | { code: number; message: RegExp };
}

const refused = (message: RegExp) => ({ code: ErrorCode.InvalidParams, message });

const ROWS: Row[] = [
  { name: "a file inside is served", use: "existing", path: () => join(work, "notes.txt"), expect: { ok: () => join(work, "notes.txt") } },
  { name: "a symlink inside to a file inside is served", use: "existing", path: () => join(work, "link-inside"), expect: { ok: () => join(work, "notes.txt") } },
  { name: "a symlink to a file out of the root is refused", use: "existing", path: () => join(work, "link-to-secret"), expect: refused(/is outside/) },
  { name: "a path through a symlinked folder out of the root is refused", use: "existing", path: () => join(work, "link-to-outside", "secret.txt"), expect: refused(/is outside/) },
  { name: "a write through a symlinked folder out of the root is refused", use: "new", path: () => join(work, "link-to-outside", "planted.txt"), expect: refused(/is outside/) },
  { name: "`..` out of the root is refused", use: "existing", path: () => join(work, "..", "outside", "secret.txt"), expect: refused(/is outside/) },
  { name: "`..` below a missing folder is refused for a write", use: "new", path: () => `${work}/new/../../outside/planted.txt`, expect: refused(/is outside/) },
  { name: "an absolute path outside is refused", use: "existing", path: () => join(outside, "secret.txt"), expect: refused(/is outside/) },
  { name: "a missing file outside is refused, not reported missing", use: "existing", path: () => join(outside, "nope.txt"), expect: refused(/is outside/) },
  { name: "a relative path is refused", use: "existing", path: () => "notes.txt", expect: refused(/must be an absolute path/) },
  { name: "a NUL byte is refused", use: "existing", path: () => `${work}/notes.txt\0.png`, expect: refused(/NUL/) },
  { name: "a NUL byte is refused for a write", use: "new", path: () => `${work}/a\0b.txt`, expect: refused(/NUL/) },
  { name: "a write through a dangling symlink is refused", use: "new", path: () => join(work, "dangling"), expect: refused(/symbolic link whose target does not exist/) },
  { name: "a missing file inside is ResourceNotFound", use: "existing", path: () => join(work, "nope.txt"), expect: { code: ErrorCode.ResourceNotFound, message: /does not exist/ } },
  { name: "a name beginning with two dots (..cache) is allowed", use: "existing", path: () => join(work, "..cache", "entry.txt"), expect: { ok: () => join(work, "..cache", "entry.txt") } },
  { name: "a file named ..notes is allowed", use: "existing", path: () => join(work, "..notes"), expect: { ok: () => join(work, "..notes") } },
  { name: "a file created in a not-yet-existing folder inside is allowed", use: "new", path: () => join(work, "deep", "er", "new.txt"), expect: { ok: () => join(work, "deep", "er", "new.txt") } },
];

/**
 * Runs the table against one host: `check` serves the row's path and asserts
 * it reached `expected` (the real file), or throws the host's own error type.
 */
function table(check: (row: Row, expected: string) => Promise<void>, unwrap: (error: unknown) => { code: number; message: string }): void {
  for (const row of ROWS) {
    test(row.name, async () => {
      const path = row.path();
      if ("ok" in row.expect) {
        await check(row, row.expect.ok());
        return;
      }
      const { code, message } = row.expect;
      await assert.rejects(check(row, ""), (error: unknown) => {
        const e = unwrap(error);
        assert.equal(e.code, code, `${JSON.stringify(path)}: ${e.message}`);
        assert.match(e.message, message);
        return true;
      });
    });
  }
}

describe("the sidecar's host (LocalHost)", () => {
  const host = new LocalHost();
  const never = new AbortController().signal;
  after(() => host.dispose());
  table(
    async (row, expected) => {
      const scope = { sessionId: "s1", roots: [work] };
      const path = row.path();
      if (row.use === "existing") {
        const read = (await host.handle(HostMethod.readTextFile, { sessionId: "s1", path }, scope, never)) as { content: string };
        assert.equal(read.content, readFileSync(expected, "utf8"));
      } else {
        await host.handle(HostMethod.writeTextFile, { sessionId: "s1", path, content: "written" }, scope, never);
        assert.equal(readFileSync(expected, "utf8"), "written");
      }
    },
    (error) => {
      assert.ok(error instanceof RpcFailure, `not an RpcFailure: ${String(error)}`);
      return error;
    },
  );
});

describe("the editor's host (confinedPath over the workspace folders)", () => {
  table(
    async (row, expected) => assert.equal(await confinedPath(row.path(), [work], row.use), expected),
    (error) => {
      assert.ok(error instanceof ResponseError, `not a ResponseError: ${String(error)}`);
      return error;
    },
  );
});

test("regression: the editor's file host no longer follows a symlink out of the workspace", async () => {
  await assert.rejects(confinedPath(join(work, "link-to-secret"), [work], "existing"), (error: unknown) => {
    assert.ok(error instanceof ResponseError);
    assert.equal(error.code, ErrorCode.InvalidParams);
    assert.match(error.message, /is outside the workspace folders/);
    return true;
  });
});

test("regression: the editor's file host no longer refuses a name beginning with two dots (..cache)", async () => {
  assert.equal(await confinedPath(join(work, "..cache", "entry.txt"), [work], "existing"), join(work, "..cache", "entry.txt"));
});
