// The web client a test needs in dist/web/client, where a `serve` started from
// source finds it. Test files run side by side, and some pack that folder.
import assert from "node:assert/strict";
import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { buildToDist } from "./build.ts";

const DIST = join(resolve(import.meta.dirname, "../.."), "dist/web/client");

/** Each file of the folder with the time it was last written. */
function written(): Record<string, number> {
  return Object.fromEntries(readdirSync(DIST).map((name) => [name, statSync(join(DIST, name)).mtimeMs]));
}

describe("buildToDist", () => {
  it("regression: it rebuilt a built dist/web/client, emptying it first, and a .vsix packed meanwhile lacked sw.js; a built client is left as it is", async () => {
    await buildToDist();
    const before = written();
    assert.ok("index.html" in before && "sw.js" in before, "the client is built");
    await buildToDist();
    assert.deepEqual(written(), before);
  });

  it("leaves no staging folder beside the client", async () => {
    await buildToDist();
    assert.deepEqual(readdirSync(join(DIST, "..")).filter((name) => name.startsWith(".client-")), []);
  });
});
