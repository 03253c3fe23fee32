// The inner `npm install code-server` of the extension suite's setup runs in
// an environment of its own: what the outer npm (`npm test`) exported must not
// reach it, or code-server's postinstall judges the outer npm's Node.
import assert from "node:assert/strict";
import { delimiter } from "node:path";
import { it } from "node:test";
import { installEnv } from "./setup.ts";

/** What `npm test` run by the machine's Node 20 exports to its scripts. */
const OUTER_NPM_ENV: NodeJS.ProcessEnv = {
  PATH: "/work/node_modules/.bin:/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin:/usr/bin",
  HOME: "/home/someone",
  LANG: "C.UTF-8",
  ACP_REMOTE_CACHE: "/tmp/cache",
  npm_config_user_agent: "npm/10.8.2 node/v20.19.2 linux x64 workspaces/false",
  npm_config_node_gyp: "/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js",
  npm_config_nodedir: "/usr/include/node20",
  npm_config_global_prefix: "/usr",
  NPM_CONFIG_PREFIX: "/usr/local",
  npm_package_name: "acp-remote",
  npm_package_version: "0.1.0",
  npm_lifecycle_event: "test",
  npm_lifecycle_script: "npm run build && node scripts/test.mjs",
  npm_node_execpath: "/usr/bin/node",
  npm_execpath: "/usr/lib/node_modules/npm/bin/npm-cli.js",
  npm_command: "run-script",
  npm_config_cafile: "/etc/ssl/certs/ca-certificates.crt",
  npm_config_registry: "https://registry.npmjs.org/",
  npm_config_globalconfig: "/usr/etc/npmrc",
  INIT_CWD: "/work",
};

it("regression: the inner npm install of code-server no longer inherits the outer npm's environment (user agent node/v20 made its postinstall refuse)", () => {
  const env = installEnv(OUTER_NPM_ENV, "/opt/node24/bin", "/opt/node24-headers");
  const kept = ["npm_config_nodedir", "npm_config_audit", "npm_config_fund", "npm_config_cafile", "npm_config_registry"];
  const leaked = Object.keys(env).filter((name) => /^npm_/i.test(name) && !kept.includes(name));
  assert.deepEqual(leaked, []);
  assert.equal(env["npm_config_user_agent"], undefined);
  assert.equal(env["INIT_CWD"], undefined);
  assert.equal(env["NPM_CONFIG_PREFIX"], undefined);
  // What the install needs: Node 24 first on PATH, node-gyp on Node 24's headers.
  assert.equal(env["PATH"]?.split(delimiter)[0], "/opt/node24/bin");
  assert.equal(env["npm_config_nodedir"], "/opt/node24-headers");
  // The machine's registry and its CA stay: the inner npm must reach the registry the outer one reached.
  assert.equal(env["npm_config_cafile"], "/etc/ssl/certs/ca-certificates.crt");
  assert.equal(env["npm_config_registry"], "https://registry.npmjs.org/");
  assert.equal(env["npm_config_globalconfig"], undefined);
  // The rest of the caller's environment is kept.
  assert.equal(env["HOME"], "/home/someone");
  assert.equal(env["ACP_REMOTE_CACHE"], "/tmp/cache");
});

it("installEnv | without headers, sets no nodedir (the outer one is dropped all the same)", () => {
  const env = installEnv(OUTER_NPM_ENV, "/opt/node24/bin");
  assert.equal(env["npm_config_nodedir"], undefined);
  assert.equal(installEnv({}, "/opt/node24/bin")["PATH"], "/opt/node24/bin");
});
