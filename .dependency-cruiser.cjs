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

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "protocol-imports-nothing-of-ours",
      comment: "protocol/ holds wire constants and shapes; every other part builds on it, so it builds on nothing of ours.",
      severity: "error",
      from: { path: "^protocol/" },
      to: { dependencyTypes: OURS, pathNot: "^protocol/" },
    },
    {
      name: "common-imports-only-protocol",
      comment: "common/ is shared by the sidecar, the client and the extension: it may not pull any of them in.",
      severity: "error",
      from: { path: "^common/" },
      to: { dependencyTypes: OURS, pathNot: "^(protocol|common)/" },
    },
    {
      name: "client-imports-only-protocol-and-common",
      comment: "The client library ships without the sidecar or the extension.",
      severity: "error",
      from: { path: "^client/" },
      to: { dependencyTypes: OURS, pathNot: "^(protocol|common|client)/" },
    },
    {
      name: "extension-imports-only-protocol-and-common",
      comment:
        "The extension talks to the sidecar over the control protocol only, never through its code or the client's. Of web/ it may name the session view's contract (its types), not its code: the session tab loads the built view at run time.",
      severity: "error",
      from: { path: "^extension/" },
      to: { dependencyTypes: OURS, pathNot: "^(protocol|common|extension)/|^web/session-view/api[.]ts$" },
    },
    {
      name: "acp-transport-uses-only-the-hub-interface",
      comment: "The /acp transport reaches the hub through its public interface file, never its inside.",
      severity: "error",
      from: { path: "^sidecar/acp/" },
      to: { path: "^sidecar/hub/", pathNot: HUB_INTERFACE },
    },
    {
      name: "sidecar-does-not-import-extension",
      comment: "The sidecar runs without VS Code; the extension is its client.",
      severity: "error",
      from: { path: "^sidecar/" },
      to: { dependencyTypes: OURS, path: "^extension/" },
    },
    {
      name: "sidecar-does-not-import-client",
      comment: "Only the CLI may load `acp-remote connect` (client/connect.ts), and only that file of the client.",
      severity: "error",
      from: { path: "^sidecar/", pathNot: "^sidecar/cli/" },
      to: { dependencyTypes: OURS, path: "^client/" },
    },
    {
      name: "sidecar-cli-imports-only-client-connect",
      comment: "`acp-remote connect` is the client's one entry the CLI may load.",
      severity: "error",
      from: { path: "^sidecar/cli/" },
      to: { dependencyTypes: OURS, path: "^client/", pathNot: "^client/connect[.]ts$" },
    },
    {
      name: "web-client-imports-only-protocol-and-session-view",
      comment: "The web client runs in the browser: it builds on the wire shapes and the shared session view, nothing of the sidecar or the extension.",
      severity: "error",
      from: { path: "^web/client/" },
      to: { dependencyTypes: OURS, pathNot: "^(protocol|web/session-view|web/client)/" },
    },
    {
      name: "parts-do-not-import-the-composition",
      comment:
        "sidecar/server/ builds the server from its parts, and sidecar/cli/ and sidecar/control/ start it: every other part of the sidecar is handed what it needs, so no arrow points up to them.",
      severity: "error",
      from: { path: "^sidecar/", pathNot: "^sidecar/(server|cli|control)/" },
      to: { dependencyTypes: OURS, path: "^sidecar/(server|cli|control)/" },
    },
    {
      name: "http-layer-imports-no-route",
      comment:
        "sidecar/http/ is the HTTP toolkit under every route (listener, auth, Origin/Host, TLS, bodies, SSE): it knows the hub's principals and the paired devices' tokens, never a route or what runs behind one.",
      severity: "error",
      from: { path: "^sidecar/http/" },
      to: { dependencyTypes: OURS, pathNot: "^(protocol|common)/|^sidecar/(http/|limits[.]ts$|hub/types[.]ts$|devices/)" },
    },
    {
      name: "session-view-imports-only-protocol",
      comment: "The session view is drawn in the phone's page and in the editor's webview alike: it builds on the wire shapes and nothing else of ours.",
      severity: "error",
      from: { path: "^web/session-view/" },
      to: { dependencyTypes: OURS, pathNot: "^(protocol|web/session-view)/" },
    },
    {
      name: "view-harness-imports-only-protocol-and-session-view",
      comment: "The harness shows the session view alone in a page (for its tests): the view and the wire shapes, nothing of the sidecar, the extension or the web client.",
      severity: "error",
      from: { path: "^web/harness/" },
      to: { dependencyTypes: OURS, pathNot: "^(protocol|web/session-view|web/harness)/" },
    },
    {
      name: "no-circular",
      comment: "A cycle makes both ends one unit, in any part of the tree: split out what they share.",
      severity: "error",
      from: { path: "^(protocol|common|sidecar|client|extension|web)/" },
      to: { circular: true },
    },
    {
      name: "shipped-code-does-not-import-tests",
      comment: "test/, bench/ and scripts/ may import anything; nothing shipped imports them.",
      severity: "error",
      from: { path: "^(protocol|common|sidecar|client|extension|web)/" },
      to: { dependencyTypes: OURS, path: "^(test|bench|scripts)/" },
    },
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
