// Which Node runs the sidecar (extension/runtime.ts): the editor's own when it
// has node:sqlite, else the first node on PATH that has it, else a clear error.
// Real binaries: the project's Node 24 and, when the machine has one, an older
// system Node without node:sqlite.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { describe, it } from "node:test";
import { findSidecarRuntime, hostHasSqlite, RuntimeError } from "../../extension/runtime.ts";

const NODE24_DIR = dirname(new URL("../../node_modules/node/bin/node", import.meta.url).pathname);
const SYSTEM_NODE = "/usr/bin/node";
const systemNodeLacksSqlite = (() => {
  if (!existsSync(SYSTEM_NODE)) return false;
  try {
    execFileSync(SYSTEM_NODE, ["-e", "require('node:sqlite')"], { stdio: "ignore" });
    return false;
  } catch {
    return true;
  }
})();

describe("sidecar runtime", () => {
  it("the editor's Node has node:sqlite | the sidecar runs on it", () => {
    assert.equal(hostHasSqlite(), true, "the tests run on Node 24");
    assert.deepEqual(findSidecarRuntime(), { kind: "host" });
  });

  it("the editor's Node lacks node:sqlite, PATH has Node 24 | the sidecar runs on that node", () => {
    const runtime = findSidecarRuntime({ hostHasSqlite: () => false, path: `/nonexistent:${NODE24_DIR}` });
    assert.equal(runtime.kind, "path");
    assert.ok(runtime.kind === "path" && runtime.node === `${NODE24_DIR}/node`);
    assert.ok(runtime.kind === "path" && /^v24\./.test(runtime.version));
  });

  it("no node on PATH | a RuntimeError that says what to install", () => {
    assert.throws(
      () => findSidecarRuntime({ hostHasSqlite: () => false, path: "/nonexistent" }),
      (err: unknown) => err instanceof RuntimeError && /no node was found on PATH/.test(err.message) && /Install Node 22\.13\+/.test(err.message),
    );
  });

  it("only a node without node:sqlite on PATH | the error names it", { skip: !systemNodeLacksSqlite && "no older system Node here" }, () => {
    assert.throws(
      () => findSidecarRuntime({ hostHasSqlite: () => false, path: dirname(SYSTEM_NODE) }),
      (err: unknown) => err instanceof RuntimeError && err.message.includes(`none of ${SYSTEM_NODE} has node:sqlite`),
    );
  });
});
