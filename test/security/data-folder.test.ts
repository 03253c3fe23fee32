// Who may read the data folder: a real `serve` (the embedded SQLite store,
// `--tls`, a generated token) on a folder it creates, and on one an earlier
// run left open to everyone. The folder must be 0700 and every file in it
// 0600 (the store with its -wal and -shm, the token, the TLS key and
// certificate), whatever the umask lets through.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { serve, TOKEN_FILE, type RunningServer } from "../../sidecar/server/serve.ts";
import { SELF_SIGNED_CERT_FILE, SELF_SIGNED_KEY_FILE } from "../../sidecar/http/tls.ts";
import { STORE_FILE } from "../../sidecar/store/store.ts";
import { FIXTURE_AGENT } from "../helpers/serve-child.ts";

/** A umask that lets group and others read what is created: the modes must come from the server, not from it. */
const OPEN_UMASK = 0o022;

const mode = (path: string): string => `0${(statSync(path).mode & 0o777).toString(8)}`;

function start(dataDir: string, log: (line: string) => void = () => undefined): Promise<RunningServer> {
  return serve({
    host: "127.0.0.1",
    port: 0,
    agents: [{ name: "fixture", command: process.execPath, args: [FIXTURE_AGENT] }],
    tokens: [],
    auth: true,
    tls: "self-signed",
    dataDir,
    allowedOrigins: [],
    log,
  });
}

/** Every file directly in `dir`, with its mode. */
function modes(dir: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isFile()) result[entry.name] = mode(join(dir, entry.name));
  return result;
}

describe("the data folder is readable by its owner only", () => {
  let parent: string;
  let umask: number;
  const servers: RunningServer[] = [];

  before(() => {
    umask = process.umask(OPEN_UMASK);
    parent = mkdtempSync(join(tmpdir(), "acp-remote-data-folder-"));
  });

  after(async () => {
    for (const server of servers) await server.close();
    process.umask(umask);
    rmSync(parent, { recursive: true, force: true });
  });

  test("the data folder is 0700 and its files 0600", async () => {
    const dataDir = join(parent, "new", "acp-remote");
    const server = await start(dataDir);
    servers.push(server);
    // A write, so that the store's write-ahead log exists too.
    await server.devices.pair("Phone");
    assert.equal(mode(dataDir), "0700");
    const files = modes(dataDir);
    for (const name of [STORE_FILE, `${STORE_FILE}-wal`, `${STORE_FILE}-shm`, TOKEN_FILE, SELF_SIGNED_KEY_FILE, SELF_SIGNED_CERT_FILE]) {
      assert.ok(name in files, `${name} is in the data folder: ${JSON.stringify(files)}`);
    }
    for (const [name, fileMode] of Object.entries(files)) assert.equal(fileMode, "0600", `${name} is ${fileMode}`);
  });

  test("an existing 0755 data folder and its 0644 files are tightened at start, and the start says so", async () => {
    const dataDir = join(parent, "existing");
    // An earlier run made the files; then they were opened to everyone, as an older version left them.
    await (await start(dataDir)).close();
    chmodSync(dataDir, 0o755);
    for (const name of Object.keys(modes(dataDir))) chmodSync(join(dataDir, name), 0o644);
    // A link in the folder to a file elsewhere: the server has no business changing that file.
    const elsewhere = join(parent, "elsewhere.txt");
    writeFileSync(elsewhere, "not the server's", { mode: 0o644 });
    chmodSync(elsewhere, 0o644);
    symlinkSync(elsewhere, join(dataDir, "link-to-elsewhere"));

    const lines: string[] = [];
    const server = await start(dataDir, (line) => lines.push(line));
    servers.push(server);
    assert.equal(mode(dataDir), "0700");
    for (const [name, fileMode] of Object.entries(modes(dataDir))) assert.equal(fileMode, "0600", `${name} is ${fileMode}`);
    assert.equal(mode(elsewhere), "0644", "the file behind the link is left as it was");
    const said = lines.find((line) => line.includes("was open to other users"));
    assert.ok(said, `the start says it tightened the folder: ${lines.join("\n")}`);
    assert.ok(said.includes(dataDir), said);
    assert.match(said, /the folder \(was 0755\)/);
    assert.match(said, new RegExp(`${TOKEN_FILE} \\(was 0644\\)`));
  });

  test("a folder already private starts without a word about it", async () => {
    const dataDir = join(parent, "private");
    await (await start(dataDir)).close();
    const lines: string[] = [];
    const server = await start(dataDir, (line) => lines.push(line));
    servers.push(server);
    assert.deepEqual(lines.filter((line) => line.includes("open to other users")), []);
  });
});
