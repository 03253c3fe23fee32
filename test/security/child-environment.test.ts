// What the processes the sidecar starts for others can read of its
// environment: a real `acp-remote serve` (and `serve --control stdio`, as an
// editor hosts it) with its secrets set the ways a person sets them, the
// fixture agent reporting its own process.env, and a terminal the sidecar
// runs for the agent printing `env`. None of them may see an ACP_REMOTE_*
// variable, nor a secret's value under any other name; everything else of the
// environment still reaches them.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { MessageConnection } from "vscode-jsonrpc";
import { methods, type SessionNotification } from "@agentclientprotocol/sdk";
import { childEnvironment, SERVER_SECRET_ENV } from "../../common/child-environment.ts";
import { ControlNotification, ControlRequest, type ServerInfo } from "../../protocol/control.ts";
import { demoAgentSpec, TOKEN_FILE } from "../../sidecar/server/serve.ts";
import { connectSdkClient, texts, type SdkClient } from "../cluster/sdk-client.ts";
import { CLI, NODE } from "../helpers/connect-child.ts";
import { spawnControlled, type ControlChild } from "../helpers/control-child.ts";
import { ManagedProcess } from "../helpers/managed-process.ts";
import { FIXTURE_AGENT } from "../helpers/serve-child.ts";

/** The node secret the file of ACP_REMOTE_NODE_SECRET_FILE holds (the file wins over the variable, so the server reads it). */
const NODE_SECRET_IN_FILE = "node-secret-from-a-file-0123456789abcdef";
const secretFolder = mkdtempSync(join(tmpdir(), "acp-remote-env-secret-"));
const NODE_SECRET_FILE = join(secretFolder, "node-secret");
writeFileSync(NODE_SECRET_FILE, `${NODE_SECRET_IN_FILE}\n`, { mode: 0o600 });

/** The server's secrets (every name of SERVER_SECRET_ENV), each set as a person would set it. */
const SECRETS: Record<(typeof SERVER_SECRET_ENV)[number], string> = {
  ACP_REMOTE_TOKEN: "token-set-by-hand-0123456789abcdef",
  ACP_REMOTE_UPSTREAM_KEY: "sk-upstream-key-0123456789abcdef",
  // The embedded store: the address is only there to be looked for.
  ACP_REMOTE_STORE: "sqlite://acp:store-password-0123456789@store.invalid/0",
  ACP_REMOTE_NODE_SECRET: "node-secret-0123456789abcdef",
  ACP_REMOTE_NODE_SECRET_FILE: NODE_SECRET_FILE,
  ACP_REMOTE_NTFY_TOKEN: "tk_ntfy-token-0123456789abcdef",
};
/** Not ours: it must still reach the children. */
const PLAIN = { CHILD_ENV_PLAIN_VARIABLE: "plain-value" } as const;
/** A turn of the fixture agent ends well within this, in milliseconds. */
const TURN_TIMEOUT_MS = 30_000;

/** What a child must not see, said as the list of findings (empty when clean). */
function leaks(env: Record<string, string | undefined>, secrets: Record<string, string> = { ...SECRETS, NODE_SECRET_IN_FILE }): string[] {
  const found: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (/^ACP_REMOTE_/i.test(name)) found.push(`variable ${name}`);
    for (const [secretName, secret] of Object.entries(secrets)) {
      if (value?.includes(secret)) found.push(`the value of ${secretName} in ${name}`);
    }
  }
  return found;
}

/** `env`'s output (NAME=value lines) as an object; a value spanning lines keeps only its first. */
function parseEnvOutput(output: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of output.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return env;
}

const folders: string[] = [];
function folder(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  folders.push(dir);
  return dir;
}
after(() => {
  rmSync(secretFolder, { recursive: true, force: true });
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

describe("acp-remote serve with its secrets in its environment", () => {
  let serve: ManagedProcess;
  let url: string;
  let client: SdkClient;
  let sessionId: string;
  let cwd: string;

  before(async () => {
    cwd = folder("acp-remote-env-cwd-");
    serve = new ManagedProcess({
      name: "acp-remote serve",
      command: NODE,
      // No --token: the token set by hand in the environment is the server's.
      args: [CLI, "serve", "--port", "0", "--data-dir", folder("acp-remote-env-data-"), "--agent", `fixture=${NODE} ${FIXTURE_AGENT}`],
      env: { ...process.env, ...SECRETS, ...PLAIN },
      group: true,
    });
    await serve.start(/acp-remote listening on \S+/);
    url = (await serve.waitForOutput(/acp-remote listening on (\S+)/))[1] as string;
    client = connectSdkClient({ baseUrl: url, token: SECRETS.ACP_REMOTE_TOKEN, transport: "h2c" });
    await client.initialize();
    sessionId = (await client.connection.agent.request(methods.agent.session.new, { cwd, mcpServers: [] })).sessionId;
  });

  after(async () => {
    await client?.close();
    await serve?.stop();
  });

  /** The agent's message text of one prompt. */
  async function prompt(text: string): Promise<string> {
    const from = client.updates.length;
    await client.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
    return texts(client.updates.slice(from), "agent_message_chunk").join("");
  }

  test("an agent's environment holds none of the server's secrets", { timeout: TURN_TIMEOUT_MS }, async () => {
    const said = await prompt("env");
    assert.match(said, /^env: /);
    const env = JSON.parse(said.slice("env: ".length)) as Record<string, string>;
    assert.deepEqual(leaks(env), []);
    assert.equal(env["CHILD_ENV_PLAIN_VARIABLE"], PLAIN.CHILD_ENV_PLAIN_VARIABLE, "the rest of the environment is inherited");
  });

  test("a terminal the sidecar runs for an agent holds none of the server's secrets", { timeout: TURN_TIMEOUT_MS }, async () => {
    const said = await prompt("terminal env");
    assert.match(said, /^exit: 0\n/);
    const env = parseEnvOutput(said.slice("exit: 0\n".length));
    assert.deepEqual(leaks(env), []);
    assert.equal(env["CHILD_ENV_PLAIN_VARIABLE"], PLAIN.CHILD_ENV_PLAIN_VARIABLE, "the rest of the environment is inherited");
  });
});

describe("acp-remote serve --control stdio: the editor's token travels in initialize", () => {
  const EDITOR_TOKEN = "editor-token-from-secret-storage-0123456789";
  /** One the editor's own environment happened to hold: the sidecar inherits it, and must not accept it. */
  const INHERITED = "token-inherited-from-the-editor-0123456789";
  let dataDir: string;
  let sidecar: ControlChild;
  let connection: MessageConnection;
  let info: ServerInfo;
  let stderr = "";
  const updates: SessionNotification[] = [];

  before(async () => {
    dataDir = folder("acp-remote-env-control-");
    sidecar = await spawnControlled({
      token: EDITOR_TOKEN,
      dataDir,
      env: { ...SECRETS, ACP_REMOTE_TOKEN: INHERITED, ...PLAIN },
      permissionPolicy: "both",
      serve: { agents: [{ name: "fixture", command: NODE, args: [FIXTURE_AGENT] }] },
      onStderr: (output) => output.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk)),
    });
    connection = sidecar.connection;
    connection.onNotification(ControlNotification.sessionUpdate, (n) => void updates.push(n));
    const outcome = sidecar.started;
    assert.ok("url" in outcome, `the listener did not start: ${JSON.stringify(outcome)}\n${stderr}`);
    info = outcome;
  });

  after(async () => {
    await sidecar?.stop();
  });

  async function statusWith(token: string): Promise<number> {
    const response = await fetch(`${info.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } });
    await response.arrayBuffer();
    return response.status;
  }

  test("the token from initialize is accepted; one inherited from the editor's environment is not", async () => {
    assert.equal(await statusWith(EDITOR_TOKEN), 200);
    assert.equal(await statusWith(INHERITED), 401);
    assert.equal(existsSync(join(dataDir, TOKEN_FILE)), false, "no token was generated in the data folder");
  });

  test("an agent of an editor-hosted sidecar holds none of the server's secrets", { timeout: TURN_TIMEOUT_MS }, async () => {
    const opened = await connection.sendRequest(ControlRequest.newSession, { agent: "fixture", cwd: dataDir });
    await connection.sendRequest(ControlRequest.prompt, { sessionId: opened.sessionId, prompt: [{ type: "text", text: "env" }] });
    const said = texts(updates.filter((u) => u.sessionId === opened.sessionId), "agent_message_chunk").join("");
    assert.match(said, /^env: /);
    const env = JSON.parse(said.slice("env: ".length)) as Record<string, string>;
    assert.deepEqual(leaks(env, { ...SECRETS, NODE_SECRET_IN_FILE, INHERITED, EDITOR_TOKEN }), []);
    assert.equal(env["CHILD_ENV_PLAIN_VARIABLE"], PLAIN.CHILD_ENV_PLAIN_VARIABLE);
  });
});

describe("childEnvironment", () => {
  test("drops every ACP_REMOTE_* variable, in any case, and keeps the rest; what the child is given by name comes on top", () => {
    const env = childEnvironment({ GIVEN: "1", ACP_REMOTE_DEMO_DELAY_MS: "0" }, { PATH: "/bin", ACP_REMOTE_TOKEN: "t", acp_remote_store: "redis://:pw@h/0", HOME: "/home/me" });
    assert.deepEqual(env, { PATH: "/bin", HOME: "/home/me", GIVEN: "1", ACP_REMOTE_DEMO_DELAY_MS: "0" });
  });

  test("the embedded demo agent is handed its pace setting by name, since it inherits no ACP_REMOTE_* variable", () => {
    const before = process.env["ACP_REMOTE_DEMO_DELAY_MS"];
    process.env["ACP_REMOTE_DEMO_DELAY_MS"] = "3";
    try {
      assert.deepEqual(demoAgentSpec().env, { ACP_REMOTE_DEMO_DELAY_MS: "3" });
    } finally {
      if (before === undefined) delete process.env["ACP_REMOTE_DEMO_DELAY_MS"];
      else process.env["ACP_REMOTE_DEMO_DELAY_MS"] = before;
    }
  });
});
