// The folders a person's sessions may use (design: third wave, decision 1),
// against a real `acp-remote serve` with two people besides its own: bob,
// granted a folder with `--root bob=DIR`, and carol, granted none. The
// fixture agent reads and writes files through its client, as real agents
// do; the clients are the ACP SDK's own. The editor is played over the
// control protocol with `host.fs` and `host.terminal`, as the VS Code
// extension attaches.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createMessageConnection, type MessageConnection } from "vscode-jsonrpc";
import { StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { methods, type McpServer, type SessionNotification } from "@agentclientprotocol/sdk";
import { ControlNotification, HostMethod, type ServerFailure, type ServerInfo } from "../../protocol/control.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";
import { WEB_AGENTS_PATH, type WebAgentsResponse } from "../../protocol/web-client.ts";
import { Lsp } from "../../sidecar/control/lsp.ts";
import { createHub } from "../../sidecar/hub/hub.ts";
import { PersonFolders } from "../../sidecar/hub/person-folders.ts";
import { personPrincipal } from "../../sidecar/hub/types.ts";
import { openSqliteStore } from "../../sidecar/store/sqlite/index.ts";
import { PEOPLE_DIR } from "../../sidecar/server/options.ts";
import { connectSdkClient, texts, type SdkClient } from "../cluster/sdk-client.ts";
import { CLI, NODE } from "../helpers/connect-child.ts";
import { newSession as newHubSession, open } from "../helpers/hub-test-client.ts";
import { ManagedProcess } from "../helpers/managed-process.ts";
import { FIXTURE_AGENT } from "../helpers/serve-child.ts";

const OWNER_TOKEN = "owner-token-0123456789abcdef";
const BOB_TOKEN = "bob-token-0123456789abcdef";
const CAROL_TOKEN = "carol-token-0123456789abcdef";
const SECRET = "the owner's secret";
const NOTE = "bob's note";
/** A turn of the fixture agent, or a start of the server, ends well within this, in milliseconds. */
const STEP_TIMEOUT_MS = 60_000;

const folders: string[] = [];
/** A new folder, as its real path (the server answers real paths). */
function folder(prefix: string): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  folders.push(dir);
  return dir;
}
after(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

/** The owner's files, bob's folder (with a link out to the owner's), and the server's data folder. */
function layout(): { ownerDir: string; secret: string; bobDir: string; dataDir: string } {
  const ownerDir = folder("acp-remote-owner-");
  const secret = join(ownerDir, "secret.txt");
  writeFileSync(secret, SECRET);
  const bobDir = folder("acp-remote-bob-");
  writeFileSync(join(bobDir, "note.txt"), NOTE);
  mkdirSync(join(bobDir, "sub"));
  symlinkSync(ownerDir, join(bobDir, "link-out"));
  return { ownerDir, secret, bobDir, dataDir: folder("acp-remote-people-data-") };
}

/** The owner's plain token, bob's and carol's labelled ones, the given grants, the fixture agent. */
function serveArgs(dataDir: string, roots: string[]): string[] {
  return [
    CLI, "serve", "--port", "0", "--data-dir", dataDir,
    "--token", OWNER_TOKEN, "--token", `bob:${BOB_TOKEN}`, "--token", `carol:${CAROL_TOKEN}`,
    ...roots.flatMap((root) => ["--root", root]),
    "--agent", `fixture=${NODE} ${FIXTURE_AGENT}`,
  ];
}

async function startServe(args: string[], cwd: string): Promise<{ serve: ManagedProcess; url: string }> {
  const serve = new ManagedProcess({ name: "acp-remote serve", command: NODE, args, cwd, group: true });
  await serve.start(/acp-remote listening on \S+/);
  return { serve, url: (await serve.waitForOutput(/acp-remote listening on (\S+)/))[1] as string };
}

const clients: SdkClient[] = [];
after(async () => {
  for (const client of clients) await client.close();
});

async function connect(url: string, token: string): Promise<SdkClient> {
  const client = connectSdkClient({ baseUrl: url, token, transport: "h2c" });
  clients.push(client);
  await client.initialize();
  return client;
}

async function newSession(client: SdkClient, params: { cwd: string; additionalDirectories?: string[]; mcpServers?: McpServer[] }): Promise<string> {
  return (await client.connection.agent.request(methods.agent.session.new, { mcpServers: [], ...params })).sessionId;
}

/** The agent's message chunks of one prompt on one session. */
async function run(client: SdkClient, sessionId: string, script: string): Promise<string[]> {
  const from = client.updates.length;
  await client.connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: script }] });
  return texts(client.updates.slice(from).filter((n) => n.sessionId === sessionId), "agent_message_chunk");
}

/** A JSON-RPC invalid-params error whose message matches. */
function invalidParams(pattern: RegExp): (error: unknown) => boolean {
  return (error) => {
    assert.equal((error as { code?: unknown }).code, ErrorCode.InvalidParams, String(error));
    assert.match((error as Error).message, pattern);
    return true;
  };
}

/** One agent-backed chat completion; its content. */
async function complete(url: string, token: string, script: string): Promise<string> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "fixture", messages: [{ role: "user", content: script }] }),
  });
  const body = (await response.json()) as { choices?: Array<{ message: { content: string } }> };
  assert.equal(response.status, 200, JSON.stringify(body));
  return body.choices?.[0]?.message.content ?? "";
}

describe("a labelled person's sessions use only the folders the server grants them (serve --root)", () => {
  let files: ReturnType<typeof layout>;
  let serve: ManagedProcess;
  let url: string;
  let bob: SdkClient;

  before(async () => {
    files = layout();
    // The server runs in the owner's folder: the owner's own default.
    ({ serve, url } = await startServe(serveArgs(files.dataDir, [`bob=${files.bobDir}`]), files.ownerDir));
    bob = await connect(url, BOB_TOKEN);
  }, { timeout: STEP_TIMEOUT_MS });

  after(async () => {
    await serve?.stop();
  });

  test("bob cannot open a session with cwd / (or outside his granted roots)", { timeout: STEP_TIMEOUT_MS }, async () => {
    const outside = [
      "/",
      files.ownerDir,
      join(files.bobDir, ".."),
      `${files.bobDir}/../${basename(files.ownerDir)}`,
      join(files.bobDir, "link-out"),
    ];
    for (const cwd of outside) {
      await assert.rejects(newSession(bob, { cwd }), invalidParams(/is outside the folders bob may use .*--root bob=DIR/), cwd);
    }
    await assert.rejects(newSession(bob, { cwd: files.bobDir, additionalDirectories: [files.ownerDir] }), invalidParams(/is outside the folders bob may use/));
    await assert.rejects(newSession(bob, { cwd: "sub" }), invalidParams(/must be an absolute path/));
    // Inside them, through `..` and all, the session opens in the real folder.
    const sessionId = await newSession(bob, { cwd: join(files.bobDir, "sub", "..", "sub") });
    assert.deepEqual(await run(bob, sessionId, "cwd"), [`cwd: ${join(files.bobDir, "sub")}`]);
  });

  test("bob cannot run a command on the server through a stdio MCP server in session/new", { timeout: STEP_TIMEOUT_MS }, async () => {
    const planted = join(files.ownerDir, "planted-by-mcp.txt");
    const stdio: McpServer = { name: "shell", command: "/bin/sh", args: ["-c", `cat ${files.secret} > ${planted}`], env: [] };
    await assert.rejects(newSession(bob, { cwd: files.bobDir, mcpServers: [stdio] }), invalidParams(/mcpServers\[0\]: bob may use MCP servers over http or sse only/));
    // One reached over the network is his to choose.
    const http: McpServer = { type: "http", name: "tools", url: "https://tools.invalid/mcp", headers: [] };
    assert.equal(typeof (await newSession(bob, { cwd: files.bobDir, mcpServers: [http] })), "string");
  });

  test("bob's fs/read_text_file outside his roots is refused", { timeout: STEP_TIMEOUT_MS }, async () => {
    // Bob takes the widest session the server lets him have: the whole disk and the owner's folder, else his own.
    let sessionId: string;
    try {
      sessionId = await newSession(bob, { cwd: "/", additionalDirectories: [files.ownerDir] });
    } catch (error) {
      if ((error as { code?: unknown }).code !== ErrorCode.InvalidParams) throw error;
      sessionId = await newSession(bob, { cwd: files.bobDir });
    }
    const said = await run(
      bob,
      sessionId,
      [
        `read ${files.secret}`,
        `read ${join(files.bobDir, "link-out", "secret.txt")}`,
        `read ${files.bobDir}/../${basename(files.ownerDir)}/secret.txt`,
        `write ${join(files.ownerDir, "planted.txt")} planted`,
        `read ${join(files.bobDir, "note.txt")}`,
      ].join("\n"),
    );
    assert.equal(said.length, 5, said.join("\n"));
    for (const refused of said.slice(0, 4)) assert.match(refused, /^error: -32602 .* is outside the session's folders/);
    assert.equal(said[4], `read: ${NOTE}`, "his own folder is his");
    assert.equal(existsSync(join(files.ownerDir, "planted.txt")), false, "nothing was written outside his folder");
  });

  test("carol, granted no folder, is offered one of her own in the data folder and kept in it", { timeout: STEP_TIMEOUT_MS }, async () => {
    const home = join(files.dataDir, PEOPLE_DIR, "carol");
    const offered = await fetch(`${url}${WEB_AGENTS_PATH}`, { headers: { authorization: `Bearer ${CAROL_TOKEN}` } });
    assert.deepEqual(((await offered.json()) as WebAgentsResponse).agents.map((a) => a.cwd), [home], "the web client offers her folder");
    const carol = await connect(url, CAROL_TOKEN);
    await assert.rejects(newSession(carol, { cwd: "/" }), invalidParams(/is outside the folders carol may use .*--root carol=DIR/));
    await assert.rejects(newSession(carol, { cwd: files.bobDir }), invalidParams(/is outside the folders carol may use/));
    const sessionId = await newSession(carol, { cwd: home });
    const said = await run(carol, sessionId, `cwd\nread ${files.secret}`);
    assert.equal(said[0], `cwd: ${home}`);
    assert.match(said[1] ?? "", /^error: -32602 .* is outside the session's folders/);
  });

  test("the server's own person still opens a session anywhere and its agent reads there", { timeout: STEP_TIMEOUT_MS }, async () => {
    const owner = await connect(url, OWNER_TOKEN);
    const sessionId = await newSession(owner, { cwd: "/" });
    assert.deepEqual(await run(owner, sessionId, `cwd\nread ${files.secret}`), ["cwd: /", `read: ${SECRET}`]);
    const offered = await fetch(`${url}${WEB_AGENTS_PATH}`, { headers: { authorization: `Bearer ${OWNER_TOKEN}` } });
    assert.deepEqual(((await offered.json()) as WebAgentsResponse).agents.map((a) => a.cwd), [files.ownerDir], "the owner is offered the server's folder");
  });

  test("/v1: bob's agent-backed completion works in his folder and cannot read the owner's; the owner's works in the server's", { timeout: STEP_TIMEOUT_MS }, async () => {
    const bobs = await complete(url, BOB_TOKEN, `cwd\nread ${files.secret}`);
    assert.match(bobs, new RegExp(`^cwd: ${files.bobDir}error: -32602 .* is outside the session's folders`));
    assert.doesNotMatch(bobs, new RegExp(SECRET));
    assert.equal(await complete(url, OWNER_TOKEN, `cwd\nread ${files.secret}`), `cwd: ${files.ownerDir}read: ${SECRET}`);
  });
});

describe("--root as the server reads it", () => {
  /** `serve` with these flags: its exit code and what it said on stderr. */
  async function refusedStart(args: string[]): Promise<{ code: number | null; stderr: string }> {
    const child = spawn(NODE, [CLI, "serve", "--port", "0", "--data-dir", folder("acp-remote-root-flag-"), "--token", `bob:${BOB_TOKEN}`, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.stdout.resume();
    const [code] = (await once(child, "exit")) as [number | null];
    return { code, stderr };
  }

  test("a --root whose folder does not exist stops the start, naming the flag; one that is not NAME=DIR is a bad argument", { timeout: STEP_TIMEOUT_MS }, async () => {
    const missing = join(folder("acp-remote-root-missing-"), "nope");
    const gone = await refusedStart(["--root", `bob=${missing}`]);
    assert.equal(gone.code, 1);
    assert.equal(gone.stderr.trim().split("\n")[0], `acp-remote serve: --root bob=${missing}: not an existing folder (an absolute path)`, "the first line says it");
    const bad = await refusedStart(["--root", "bob"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^acp-remote serve: --root: "bob" is not NAME=DIR/);
  });
});

describe("a stored session follows the grants of the server that loads it", () => {
  test("bob cannot load or resume his session in a folder the server no longer grants him", { timeout: 2 * STEP_TIMEOUT_MS }, async () => {
    const files = layout();
    const elsewhere = folder("acp-remote-bob-elsewhere-");
    const first = await startServe(serveArgs(files.dataDir, [`bob=${files.bobDir}`]), files.ownerDir);
    let sessionId: string;
    try {
      const bob = await connect(first.url, BOB_TOKEN);
      sessionId = await newSession(bob, { cwd: files.bobDir });
      assert.deepEqual(await run(bob, sessionId, "echo kept"), ["kept"]);
    } finally {
      await first.serve.stop();
    }
    // The same data folder, bob now granted another folder only.
    const second = await startServe(serveArgs(files.dataDir, [`bob=${elsewhere}`]), files.ownerDir);
    try {
      const bob = await connect(second.url, BOB_TOKEN);
      const refused = invalidParams(new RegExp(`session ${sessionId}: ${files.bobDir} is outside the folders bob may use`));
      await assert.rejects(bob.connection.agent.request(methods.agent.session.load, { sessionId, cwd: files.bobDir, mcpServers: [] }), refused);
      await assert.rejects(bob.connection.agent.request(methods.agent.session.resume, { sessionId, cwd: files.bobDir }), refused);
      // A session in the folder he has now opens as before.
      assert.deepEqual(await run(bob, await newSession(bob, { cwd: elsewhere }), "cwd"), [`cwd: ${elsewhere}`]);
    } finally {
      await second.serve.stop();
    }
  });
});

describe("a stored session's host requests follow its person's folders now, whoever prompts it", () => {
  test("bob's session from a wider grant, prompted from the editor, cannot read outside the folders he has now", { timeout: STEP_TIMEOUT_MS }, async () => {
    const files = layout();
    const bob = personPrincipal("bob");
    const file = join(files.dataDir, "store.sqlite");
    const agents = [{ name: "fixture", command: NODE, args: [FIXTURE_AGENT] }];
    // An earlier run granted bob the whole disk.
    let store = openSqliteStore(file);
    let hub = await createHub({ agents, store, folders: new PersonFolders({ granted: new Map([[bob.id, ["/"]]]) }), log: () => undefined });
    let sessionId: string;
    try {
      sessionId = await newHubSession(await open(hub, bob), "/");
    } finally {
      await hub.shutdown();
      await store.close();
    }
    // This run grants him his folder only; the editor (which opens any session) prompts the old one.
    store = openSqliteStore(file);
    hub = await createHub({ agents, store, folders: new PersonFolders({ granted: new Map([[bob.id, [files.bobDir]]]) }), log: () => undefined });
    try {
      const updates: SessionNotification[] = [];
      const unsubscribe = hub.onSessionUpdate((n) => void updates.push(n));
      await hub.prompt({ sessionId, prompt: [{ type: "text", text: `read ${files.secret}` }] });
      unsubscribe();
      const said = texts(updates.filter((n) => n.sessionId === sessionId), "agent_message_chunk");
      assert.equal(said.length, 1, said.join("\n"));
      assert.match(said[0] ?? "", /^error: -32602 .* is outside the session's folders/);
    } finally {
      await hub.shutdown();
      await store.close();
    }
  });
});

describe("the editor hosts only its owner's sessions (serve --control stdio, host.fs and host.terminal)", () => {
  let files: ReturnType<typeof layout>;
  let child: ChildProcess;
  let connection: MessageConnection;
  let info: ServerInfo;
  let stderr = "";
  /** Every host request the editor was sent: method and session. */
  const hosted: Array<{ method: string; sessionId: unknown }> = [];

  before(async () => {
    files = layout();
    child = spawn(NODE, [CLI, "serve", "--control", "stdio", "--data-dir", files.dataDir, "--token", `bob:${BOB_TOKEN}`, "--root", `bob=${files.bobDir}`], {
      // The owner's token, both where an editor hands it over and where an older sidecar reads it.
      env: { ...process.env, ACP_REMOTE_TOKEN: OWNER_TOKEN },
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    const started = new Promise<ServerInfo | ServerFailure>((resolve) => {
      connection.onNotification(ControlNotification.serverStarted, resolve);
      connection.onNotification(ControlNotification.serverFailed, resolve);
    });
    // The editor serves files and terminals of its workspace.
    connection.onRequest(HostMethod.readTextFile, (params: { sessionId: unknown }) => {
      hosted.push({ method: HostMethod.readTextFile, sessionId: params.sessionId });
      return { content: "served by the editor" };
    });
    connection.onRequest(HostMethod.terminalCreate, (params: { sessionId: unknown }) => {
      hosted.push({ method: HostMethod.terminalCreate, sessionId: params.sessionId });
      throw new Error("the editor's terminal");
    });
    connection.listen();
    await connection.sendRequest(Lsp.initialize, {
      processId: process.pid,
      initializationOptions: {
        host: { fs: true, terminal: true },
        permissionPolicy: "both",
        tokens: [OWNER_TOKEN],
        serve: { host: "127.0.0.1", port: 0, agents: [{ name: "fixture", command: NODE, args: [FIXTURE_AGENT] }] },
      },
    });
    await connection.sendNotification(Lsp.initialized, {});
    const outcome = await started;
    assert.ok("url" in outcome, `the listener did not start: ${JSON.stringify(outcome)}\n${stderr}`);
    info = outcome;
  }, { timeout: STEP_TIMEOUT_MS });

  after(async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      await connection.sendRequest(Lsp.shutdown).catch(() => undefined);
      await connection.sendNotification(Lsp.exit).catch(() => undefined);
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      await exited;
      clearTimeout(timer);
    }
    connection?.dispose();
  });

  test("bob's session with the editor attached is not hosted by the editor", { timeout: STEP_TIMEOUT_MS }, async () => {
    const bob = await connect(info.url, BOB_TOKEN);
    const sessionId = await newSession(bob, { cwd: files.bobDir });
    const said = await run(bob, sessionId, `read ${join(files.bobDir, "note.txt")}\nread ${files.secret}\nterminal echo served here`);
    assert.equal(said[0], `read: ${NOTE}`, "the sidecar reads his file, in his folder");
    assert.match(said[1] ?? "", /^error: -32602 .* is outside the session's folders/);
    assert.equal(said[2], "exit: 0\nserved here\n", "the sidecar runs his terminal");
    assert.deepEqual(hosted.filter((h) => h.sessionId === sessionId), [], "the editor was asked nothing for bob's session");
  });

  test("the owner's session is still hosted by the editor", { timeout: STEP_TIMEOUT_MS }, async () => {
    const owner = await connect(info.url, OWNER_TOKEN);
    const sessionId = await newSession(owner, { cwd: files.ownerDir });
    assert.deepEqual(await run(owner, sessionId, `read ${files.secret}`), ["read: served by the editor"]);
    assert.deepEqual(hosted.filter((h) => h.sessionId === sessionId), [{ method: HostMethod.readTextFile, sessionId }]);
  });
});
