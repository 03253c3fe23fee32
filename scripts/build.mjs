// Bundles the sidecar CLI (ESM, Node: dist/cli.mjs checks the Node version,
// then loads dist/acp-remote.mjs), the VS Code extension (CJS, `vscode`
// external) and the webview scripts (browser). `tsc` only type-checks.
import { build } from "esbuild";
import { readdirSync, existsSync, chmodSync } from "node:fs";
import { buildWebClient } from "./build-web-client.mjs";
import { packageVersion, versionDefine } from "./version-define.mjs";

const watch = process.argv.includes("--watch");
// Every bundle carries package.json's version (protocol/version.ts).
const common = { bundle: true, sourcemap: "linked", logLevel: "warning", target: "node22", define: versionDefine(packageVersion()) };

// ws and undici probe optional native add-ons inside try/catch; leave them out.
const optionalNative = ["bufferutil", "utf-8-validate"];

/** A bundle for Node in dist/: `name`.mjs (ESM) or `name`.cjs (CommonJS) from `entry`, with `options` beside the shared ones. */
function nodeBundle(name, entry, format, options) {
  return build({ ...common, entryPoints: { [name]: entry }, outExtension: { ".js": format === "esm" ? ".mjs" : ".cjs" }, outdir: "dist", platform: "node", format, ...options });
}

const builds = [
  // dist/cli.mjs, the command: it checks the Node that runs it and only then
  // loads the CLI, so that a Node too old says so in one line. It imports
  // nothing, and is built for Nodes older than the one the CLI needs.
  nodeBundle("cli", "sidecar/cli/launcher.ts", "esm", { target: "node16", external: ["./acp-remote.mjs"], banner: { js: "#!/usr/bin/env node" } }),
  nodeBundle("acp-remote", "sidecar/cli/main.ts", "esm", {
    external: optionalNative,
    // Bundled CommonJS dependencies call require() for Node built-ins.
    banner: {
      js: "#!/usr/bin/env node\nimport { createRequire as __acpCreateRequire } from 'node:module';\nconst require = __acpCreateRequire(import.meta.url);",
    },
  }),
];
if (existsSync("extension/extension.ts")) builds.push(nodeBundle("extension", "extension/extension.ts", "cjs", { external: ["vscode", ...optionalNative] }));
const webviewDir = "extension/webview";
if (existsSync(webviewDir)) {
  const entries = readdirSync(webviewDir).filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
  if (entries.length > 0) {
    builds.push(
      build({
        ...common,
        entryPoints: entries.map((f) => `${webviewDir}/${f}`),
        outdir: "dist/webview",
        platform: "browser",
        format: "iife",
        target: "es2022",
      }),
    );
  }
}
// The session view shared by the VS Code webview and the web client, and its
// test page: browser ES modules, each with its CSS file beside it.
if (existsSync("web/session-view/index.ts")) {
  builds.push(
    build({
      ...common,
      entryPoints: { "session-view": "web/session-view/index.ts", harness: "web/harness/main.ts" },
      outdir: "dist/web",
      platform: "browser",
      format: "esm",
      target: "es2022",
    }),
  );
}
// The web client served at `/` (web/client), with its page, manifest and icons.
if (existsSync("web/client/main.ts")) builds.push(buildWebClient("dist/web/client"));
await Promise.all(builds);
chmodSync("dist/cli.mjs", 0o755);
if (watch) console.log("watch mode is not supported; run again");
