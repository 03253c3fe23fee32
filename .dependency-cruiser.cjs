// The import rules of the project (docs/architecture.md, "Import rules"),
// checked by test/layering.test.ts on every `npm test`. Paths are relative to
// the folder the check runs in: the repository, or a fixture tree shaped like
// it (test/fixtures/layering) that proves each rule reports what it should.
//
// Only imports of our own files are judged (dependencyTypes "local"): node:
// builtins and packages are free everywhere.
/** @type {string[]} */
const OURS = ["local", "localmodule", "aliased"];

// The hub's public interface: what the /acp transport may import from
// sidecar/hub/. Everything else there is the hub's inside.
const HUB_INTERFACE = "^sidecar/hub/(types|index|api|interface)[.]ts$";

/**
 * A rule of the tree, every one an error: the files `from` matches may not
 * make the imports `to` matches. `comment` says why; dependency-cruiser
 * prints it with each violation.
 * @param {string} name
 * @param {string} comment
 * @param {import("dependency-cruiser").IRegularForbiddenRuleType["from"]} from
 * @param {import("dependency-cruiser").IRegularForbiddenRuleType["to"]} to
 * @returns {import("dependency-cruiser").IRegularForbiddenRuleType}
 */
const rule = (name, comment, from, to) => ({ name, comment, severity: "error", from, to });

/** An import of any of our own files but those `allowed` matches. */
const oursExcept = (/** @type {string} */ allowed) => ({ dependencyTypes: OURS, pathNot: allowed });

/** An import of one of our own files that `path` matches. */
const oursIn = (/** @type {string} */ path) => ({ dependencyTypes: OURS, path });

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    rule(
      "protocol-imports-nothing-of-ours",
      "protocol/ holds wire constants and shapes; every other part builds on it, so it builds on nothing of ours.",
      { path: "^protocol/" },
      oursExcept("^protocol/"),
    ),
    rule(
      "common-imports-only-protocol",
      "common/ is shared by the sidecar, the client and the extension: it may not pull any of them in.",
      { path: "^common/" },
      oursExcept("^(protocol|common)/"),
    ),
    rule(
      "client-imports-only-protocol-and-common",
      "The client library ships without the sidecar or the extension.",
      { path: "^client/" },
      oursExcept("^(protocol|common|client)/"),
    ),
    rule(
      "extension-imports-only-protocol-and-common",
      "The extension talks to the sidecar over the control protocol only, never through its code or the client's. Of web/ it may name the session view's contract (its types), not its code: the session tab loads the built view at run time.",
      { path: "^extension/" },
      oursExcept("^(protocol|common|extension)/|^web/session-view/api[.]ts$"),
    ),
    rule(
      "acp-transport-uses-only-the-hub-interface",
      "The /acp transport reaches the hub through its public interface file, never its inside.",
      { path: "^sidecar/acp/" },
      { path: "^sidecar/hub/", pathNot: HUB_INTERFACE },
    ),
    rule(
      "sidecar-does-not-import-extension",
      "The sidecar runs without VS Code; the extension is its client.",
      { path: "^sidecar/" },
      oursIn("^extension/"),
    ),
    rule(
      "sidecar-does-not-import-client",
      "Only the CLI may load `acp-remote connect` (client/connect.ts), and only that file of the client.",
      { path: "^sidecar/", pathNot: "^sidecar/cli/" },
      oursIn("^client/"),
    ),
    rule(
      "sidecar-cli-imports-only-client-connect",
      "`acp-remote connect` is the client's one entry the CLI may load.",
      { path: "^sidecar/cli/" },
      { dependencyTypes: OURS, path: "^client/", pathNot: "^client/connect[.]ts$" },
    ),
    rule(
      "web-client-imports-only-protocol-and-session-view",
      "The web client runs in the browser: it builds on the wire shapes and the shared session view, nothing of the sidecar or the extension.",
      { path: "^web/client/" },
      oursExcept("^(protocol|web/session-view|web/client)/"),
    ),
    rule(
      "parts-do-not-import-the-composition",
      "sidecar/server/ builds the server from its parts, and sidecar/cli/ and sidecar/control/ start it: every other part of the sidecar is handed what it needs, so no arrow points up to them.",
      { path: "^sidecar/", pathNot: "^sidecar/(server|cli|control)/" },
      oursIn("^sidecar/(server|cli|control)/"),
    ),
    rule(
      "http-layer-imports-no-route",
      "sidecar/http/ is the HTTP toolkit under every route (listener, auth, Origin/Host, TLS, bodies, SSE): it knows the hub's principals and the paired devices' tokens, never a route or what runs behind one.",
      { path: "^sidecar/http/" },
      oursExcept("^(protocol|common)/|^sidecar/(http/|limits[.]ts$|hub/types[.]ts$|devices/)"),
    ),
    rule(
      "session-view-imports-only-protocol",
      "The session view is drawn in the phone's page and in the editor's webview alike: it builds on the wire shapes and nothing else of ours.",
      { path: "^web/session-view/" },
      oursExcept("^(protocol|web/session-view)/"),
    ),
    rule(
      "view-harness-imports-only-protocol-and-session-view",
      "The harness shows the session view alone in a page (for its tests): the view and the wire shapes, nothing of the sidecar, the extension or the web client.",
      { path: "^web/harness/" },
      oursExcept("^(protocol|web/session-view|web/harness)/"),
    ),
    rule(
      "no-circular",
      "A cycle makes both ends one unit, in any part of the tree: split out what they share.",
      { path: "^(protocol|common|sidecar|client|extension|web)/" },
      { circular: true },
    ),
    rule(
      "shipped-code-does-not-import-tests",
      "test/, bench/ and scripts/ may import anything; nothing shipped imports them.",
      { path: "^(protocol|common|sidecar|client|extension|web)/" },
      oursIn("^(test|bench|scripts)/"),
    ),
  ],
  options: {
    // Type-only imports count: a type is as much a dependency as a value.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(node_modules|dist)/|^test/fixtures/layering/" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".mjs", ".cjs", ".json"],
    },
    moduleSystems: ["es6", "cjs"],
  },
};
