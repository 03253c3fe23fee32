// The extension's command ids (extension/command-ids.ts) and package.json's
// `contributes` name the same commands: every contributed id is declared, every
// declared one is in the table, and the menus, welcome content and walkthrough
// steps run only commands of the table.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { Command, InternalCommand } from "../../extension/command-ids.ts";

const ROOT = join(import.meta.dirname, "..", "..");

interface Manifest {
  contributes: {
    commands: Array<{ command: string }>;
    menus: Record<string, Array<{ command?: string }>>;
    viewsWelcome: Array<{ contents: string }>;
    walkthroughs: Array<{ steps: Array<{ description: string; completionEvents?: string[] }> }>;
  };
}

const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Manifest;
const table = new Set<string>(Object.values(Command));

/** The `command:` links of Markdown text, without their arguments. */
function linkedCommands(text: string): string[] {
  return [...text.matchAll(/\(command:([\w.]+)/g)].map((m) => m[1]!).filter((id) => id.startsWith("acpRemote."));
}

describe("command ids", () => {
  it("package.json declares exactly the commands of the table", () => {
    const declared = manifest.contributes.commands.map((c) => c.command);
    assert.equal(new Set(declared).size, declared.length, "no command is declared twice");
    assert.deepEqual([...declared].sort(), [...table].sort());
  });

  it("no id is in the table twice, and the commands not declared are not in it", () => {
    assert.equal(table.size, Object.keys(Command).length);
    for (const id of Object.values(InternalCommand)) assert.ok(!table.has(id), `${id} is internal`);
  });

  it("the menus, welcome content and walkthrough steps run commands of the table", () => {
    const menus = Object.values(manifest.contributes.menus).flatMap((items) => items.flatMap((i) => (i.command === undefined ? [] : [i.command])));
    const welcome = manifest.contributes.viewsWelcome.flatMap((w) => linkedCommands(w.contents));
    const steps = manifest.contributes.walkthroughs.flatMap((w) =>
      w.steps.flatMap((s) => [...linkedCommands(s.description), ...(s.completionEvents ?? []).filter((e) => e.startsWith("onCommand:")).map((e) => e.slice("onCommand:".length))]),
    );
    assert.ok(menus.length > 0 && welcome.length > 0 && steps.length > 0, "each place names commands");
    for (const id of [...menus, ...welcome, ...steps]) assert.ok(table.has(id), `${id} is in the command table`);
  });
});
