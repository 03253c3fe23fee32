// The import rules of docs/architecture.md, kept by dependency-cruiser with
// the rules of .dependency-cruiser.cjs: the repository must have no violation,
// and the same rules run on a fixture tree with one wrong import per rule
// (test/fixtures/layering) must report each of them, by rule name, and nothing
// for the allowed imports beside them.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, test } from "node:test";
import { cruise, type ICruiseResult, type IConfiguration } from "dependency-cruiser";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";

const ROOT = join(import.meta.dirname, "..");
const FIXTURE = join(ROOT, "test", "fixtures", "layering");
const SHIPPED = ["protocol", "common", "sidecar", "client", "extension", "web"];
const TSCONFIG = join(ROOT, "tsconfig.json");

const config = createRequire(import.meta.url)(join(ROOT, ".dependency-cruiser.cjs")) as Required<Pick<IConfiguration, "forbidden" | "options">>;

interface Violation {
  rule: string;
  from: string;
  to: string;
}

/** Cruises `roots` (relative to `baseDir`) with the project's rules. */
async function check(baseDir: string, roots: string[]): Promise<{ result: ICruiseResult; violations: Violation[] }> {
  const reported = await cruise(
    roots,
    {
      ...config.options,
      baseDir,
      validate: true,
      ruleSet: { forbidden: config.forbidden },
      tsConfig: { fileName: TSCONFIG },
      outputType: "json",
    },
    {},
    { tsConfig: extractTSConfig(TSCONFIG) },
  );
  const result = (typeof reported.output === "string" ? JSON.parse(reported.output) : reported.output) as ICruiseResult;
  const violations = result.summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }));
  return { result, violations };
}

const show = (violations: Violation[]): string => violations.map((v) => `${v.rule}: ${v.from} -> ${v.to}`).join("\n");

describe("layering", () => {
  test("the repository keeps the import rules", async () => {
    const { result, violations } = await check(ROOT, SHIPPED);
    assert.deepEqual(violations, [], `import rules broken (docs/architecture.md, "Import rules"):\n${show(violations)}`);
    // The check saw the code it judges: every part, and the CLI's lazy import of `acp-remote connect`.
    const sources = new Set(result.modules.map((m) => m.source));
    for (const part of SHIPPED) assert.ok([...sources].some((s) => s.startsWith(`${part}/`)), `${part}/ was cruised`);
    const cli = result.modules.find((m) => m.source === "sidecar/cli/main.ts");
    assert.ok(cli?.dependencies.some((d) => d.resolved === "client/connect.ts"), "the dynamic import of client/connect.ts is seen");
    assert.ok(![...sources].some((s) => s.startsWith("test/fixtures/layering/")), "the fixture tree is left out of the real check");
  });

  test("each rule reports its deliberately wrong import in the fixture tree, and only those", async () => {
    const { violations } = await check(FIXTURE, [...SHIPPED, "test"]);
    const cycles = violations.filter((v) => v.rule === "no-circular");
    const others = violations.filter((v) => v.rule !== "no-circular");
    const expected: Violation[] = [
      { rule: "acp-transport-uses-only-the-hub-interface", from: "sidecar/acp/transport.ts", to: "sidecar/hub/hub.ts" },
      { rule: "client-imports-only-protocol-and-common", from: "client/connect.ts", to: "sidecar/hub/types.ts" },
      { rule: "common-imports-only-protocol", from: "common/helper.ts", to: "client/connect.ts" },
      { rule: "extension-imports-only-protocol-and-common", from: "extension/activate.ts", to: "client/transport.ts" },
      { rule: "extension-imports-only-protocol-and-common", from: "extension/activate.ts", to: "sidecar/hub/hub.ts" },
      { rule: "extension-imports-only-protocol-and-common", from: "extension/activate.ts", to: "web/session-view/index.ts" },
      { rule: "protocol-imports-nothing-of-ours", from: "protocol/wire.ts", to: "sidecar/hub/hub.ts" },
      { rule: "shipped-code-does-not-import-tests", from: "sidecar/store/debug.ts", to: "test/helper.ts" },
      { rule: "sidecar-cli-imports-only-client-connect", from: "sidecar/cli/main.ts", to: "client/transport.ts" },
      { rule: "sidecar-does-not-import-client", from: "sidecar/bridge/host.ts", to: "client/connect.ts" },
      { rule: "sidecar-does-not-import-extension", from: "sidecar/bridge/process.ts", to: "extension/view.ts" },
      { rule: "web-client-imports-only-protocol-and-session-view", from: "web/client/app.ts", to: "sidecar/hub/hub.ts" },
      { rule: "session-view-imports-only-protocol", from: "web/session-view/index.ts", to: "common/helper.ts" },
      { rule: "parts-do-not-import-the-composition", from: "sidecar/v1/route.ts", to: "sidecar/server/serve.ts" },
      { rule: "http-layer-imports-no-route", from: "sidecar/http/listener.ts", to: "sidecar/v1/handler.ts" },
      { rule: "view-harness-imports-only-protocol-and-session-view", from: "web/harness/main.ts", to: "web/client/app.ts" },
      { rule: "view-harness-imports-only-protocol-and-session-view", from: "web/harness/main.ts", to: "test/helper.ts" },
      { rule: "shipped-code-does-not-import-tests", from: "web/harness/main.ts", to: "test/helper.ts" },
    ];
    const key = (v: Violation): string => `${v.rule} ${v.from} ${v.to}`;
    assert.deepEqual(others.map(key).sort(), expected.map(key).sort(), show(violations));
    // Every rule of the configuration is exercised by the fixture.
    const rules = new Set(violations.map((v) => v.rule));
    assert.deepEqual([...rules].sort(), config.forbidden.map((r) => r.name).sort());
    // The two cycles, one in the sidecar and one in the extension, each reported from either end.
    const pairs = new Set(cycles.map((c) => [c.from, c.to].sort().join(" ")));
    assert.deepEqual([...pairs].sort(), ["extension/commands.ts extension/view.ts", "sidecar/bridge/host.ts sidecar/bridge/process.ts"], show(cycles));
  });
});
