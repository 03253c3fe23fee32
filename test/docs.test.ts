// Files the docs show whole are the files the tests run: every block between
// `<!-- embed:PATH -->` and `<!-- /embed -->` in docs/*.md is compared with
// PATH, byte for byte, so a configuration in the docs cannot drift from the
// one in deploy/ that the cluster tests start. And what a reader copies out
// of the README and the docs runs as written: commands start `acp-remote` the
// way that works on the Node the README names, and the files they name are
// there.
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

const ROOT = join(import.meta.dirname, "..");
const EMBED = /<!-- embed:(\S+) -->\n```[a-z]*\n([\s\S]*?)```\n<!-- \/embed -->/g;

const embeds = readdirSync(join(ROOT, "docs"))
  .filter((name) => name.endsWith(".md"))
  .flatMap((name) => [...readFileSync(join(ROOT, "docs", name), "utf8").matchAll(EMBED)].map((m) => ({ doc: `docs/${name}`, path: m[1] as string, text: m[2] as string })));

describe("files embedded in the docs", () => {
  for (const path of ["deploy/haproxy.cfg", "deploy/nginx.conf", "deploy/acp-remote.service", "deploy/redis.conf"]) {
    it(`docs/deployment.md embeds ${path}`, () => {
      assert.ok(embeds.some((e) => e.doc === "docs/deployment.md" && e.path === path));
    });
  }
  // The configuration test/web-client/remote-access.test.ts runs with TLS in front of a phone.
  it("docs/remote-access.md embeds deploy/nginx-remote-access.conf", () => {
    assert.ok(embeds.some((e) => e.doc === "docs/remote-access.md" && e.path === "deploy/nginx-remote-access.conf"));
  });

  for (const { doc, path, text } of embeds) {
    it(`${doc} shows ${path} as it is`, () => {
      assert.equal(text, readFileSync(join(ROOT, path), "utf8"), `the block in ${doc} differs from ${path}: copy the file into it`);
    });
  }
});

/** The README and every doc, with the fenced code blocks of each: their language and lines. */
const DOCS = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md")).map((name) => `docs/${name}`)].map((doc) => {
  const text = readFileSync(join(ROOT, doc), "utf8");
  const blocks = [...text.matchAll(/```([a-z]*)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1] as string, lines: (m[2] as string).split("\n") }));
  return { doc, text, blocks };
});

/** Languages of blocks a reader runs in a shell, or puts in a service's configuration. */
const SHELL = new Set(["sh", "bash", "shell", "console", "ini"]);

/**
 * Why a line of a shell block does not run on a Node 20 machine as written,
 * or undefined. `acp-remote` is not on a reader's PATH (the package is run from
 * its folder), and `node …/dist/cli.mjs` runs on whatever `node` is first on
 * PATH, where `serve` needs Node 22.19: `npx acp-remote …` (in the folder) or
 * the folder's own `node_modules/.bin/node` run it.
 */
function notRunnable(line: string): string | undefined {
  // Each command of the line (a systemd unit's after `ExecStart=`): at its
  // start, or after a pipe, `;`, `&&`, `||` or `$(`, past variable assignments.
  for (const m of line.replace(/^ExecStart=/, "").matchAll(/(?:^|\||;|&&|\$\()\s*(?:[A-Z_]+=\S*\s+)*(\S+)((?:\s+\S+)?)/g)) {
    const [command, next] = [m[1] as string, (m[2] as string).trim()];
    if (command === "acp-remote") return "`acp-remote` is not on PATH: `npx acp-remote …` in the acp-remote folder";
    if (/^(\/usr(\/local)?)?\/?(bin\/)?node$/.test(command) && next.endsWith("cli.mjs")) {
      return "`node dist/cli.mjs` runs on the first `node` on PATH (Node 20 cannot serve): `npx acp-remote …`, or node_modules/.bin/node";
    }
  }
  return undefined;
}

describe("commands in the README and the docs run as written", () => {
  for (const { doc, blocks } of DOCS) {
    it(`regression: ${doc} ran \`node dist/cli.mjs\` or a bare \`acp-remote\`, which fail on the Node 20 the README names; its commands are \`npx acp-remote …\` or name the project's Node`, () => {
      const wrong: string[] = [];
      for (const { lang, lines } of blocks) {
        for (const line of lines) {
          const why = SHELL.has(lang) ? notRunnable(line.replace(/#.*$/, "").trim()) : undefined;
          if (why !== undefined) wrong.push(`${line.trim()}\n    ${why}`);
          // An editor's configuration starts the command itself: the bare name is on no PATH it has.
          if ((lang === "json" || lang === "lua") && /command\s*[:=]\s*["']acp-remote["']|[{[]\s*["']acp-remote["']\s*,/.test(line)) {
            wrong.push(`${line.trim()}\n    an editor cannot find \`acp-remote\`: the folder's node_modules/.bin/node and dist/cli.mjs, by absolute path`);
          }
        }
      }
      assert.deepEqual(wrong, []);
    });
  }

  it("the checks above catch the forms that failed", () => {
    assert.ok(notRunnable("node dist/cli.mjs serve --agent x=y"));
    assert.ok(notRunnable("ACP_REMOTE_TOKEN=... node dist/cli.mjs connect http://h/acp"));
    assert.ok(notRunnable("ExecStart=/usr/bin/node /opt/acp-remote/dist/cli.mjs serve"));
    assert.ok(notRunnable("acp-remote serve --port 8765"));
    assert.ok(notRunnable("printf x | acp-remote connect https://h"));
    assert.equal(notRunnable("npx acp-remote serve --port 8765"), undefined);
    assert.equal(notRunnable("ExecStart=/opt/acp-remote/node_modules/.bin/node /opt/acp-remote/dist/cli.mjs serve"), undefined);
    assert.equal(notRunnable("curl -s $URL/acp"), undefined);
  });
});

describe("files the README and the docs name", () => {
  for (const { doc, text } of DOCS) {
    it(`regression: ${doc} named files of this repository that are not there (\`spec/…\`); every one it names is`, () => {
      const missing: string[] = [];
      for (const m of text.matchAll(/`((?:spec|docs|sidecar|client|common|protocol|extension|test|web|deploy|scripts)\/[\w./-]+\.(?:md|ts|json|cfg|conf|mjs|service))`/g)) {
        if (!existsSync(join(ROOT, m[1] as string))) missing.push(m[1] as string);
      }
      assert.deepEqual(missing, []);
    });
  }
});
