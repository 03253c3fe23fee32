// Files the docs show whole are the files the tests run: every block between
// `<!-- embed:PATH -->` and `<!-- /embed -->` in docs/*.md is compared with
// PATH, byte for byte, so a configuration in the docs cannot drift from the
// one in deploy/ that the cluster tests start.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

const ROOT = join(import.meta.dirname, "..");
const EMBED = /<!-- embed:(\S+) -->\n```[a-z]*\n([\s\S]*?)```\n<!-- \/embed -->/g;

const embeds = readdirSync(join(ROOT, "docs"))
  .filter((name) => name.endsWith(".md"))
  .flatMap((name) => [...readFileSync(join(ROOT, "docs", name), "utf8").matchAll(EMBED)].map((m) => ({ doc: `docs/${name}`, path: m[1] as string, text: m[2] as string })));

describe("files embedded in the docs", () => {
  for (const path of ["deploy/haproxy.cfg", "deploy/nginx.conf"]) {
    it(`docs/deployment.md embeds ${path}`, () => {
      assert.ok(embeds.some((e) => e.doc === "docs/deployment.md" && e.path === path));
    });
  }

  for (const { doc, path, text } of embeds) {
    it(`${doc} shows ${path} as it is`, () => {
      assert.equal(text, readFileSync(join(ROOT, path), "utf8"), `the block in ${doc} differs from ${path}: copy the file into it`);
    });
  }
});
