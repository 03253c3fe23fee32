// How nodes of one shared store vouch for each other's clients. A link from
// one node to another speaks for a person with a claim signed with the node
// secret of the nodes' configuration, never with anything kept in Redis: a
// person who can read Redis, holding a token of their own, cannot act for
// another. Over TLS a link checks the other node's certificate (against
// --node-ca), and a node on a shared store without a secret does not start.
// Real sidecars (three, all on TLS) on a real Redis (TLS and a password).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createClient as createRedisClient } from "redis";
import { Acp, AcpExt, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { DEFAULT_NODE_CLAIM_WINDOW_MS } from "../../sidecar/cluster/limits.ts";
import { NodeClaims, signNodeClaim } from "../../sidecar/cluster/node-claim.ts";
import { clusterToolsMissing, CLUSTER_NODE_SECRET, startCluster, type Cluster } from "../helpers/cluster.ts";
import { endClusterTest } from "../helpers/cluster-end.ts";
import { CLI, NODE } from "../helpers/connect-child.ts";
import { createClient, type ProtocolClient } from "../helpers/http-clients.ts";
import { removeOnExit } from "../helpers/managed-process.ts";
import { startRedisServer, type RedisServer } from "../helpers/redis-server.ts";
import { testCert } from "../helpers/tls-cert.ts";
import { connectSdkClient, texts, type SdkClient } from "../cluster/sdk-client.ts";

const OWNER = { id: "owner", label: "owner" };
const MALLORY_TOKEN = "mallory-reads-redis-0123456789";
const INITIALIZE = JSON.stringify({ jsonrpc: "2.0", id: 0, method: Acp.agent.initialize, params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} } });
/** The header of the links before claims were signed: the person as base64url JSON, believed with the right bearer token. */
const unsignedOnBehalfOf = (principal: object): string => Buffer.from(JSON.stringify(principal)).toString("base64url");

describe("a node claim", () => {
  const secret = "a-node-secret-of-at-least-32-characters";
  const now = 1_700_000_000_000;
  const claims = () => new NodeClaims({ secret, nodeId: "n1", clock: () => now });

  it("is good once, for the node it names, within its window, with the secret it was signed with", () => {
    const check = claims();
    const good = signNodeClaim(secret, { from: "n2", to: "n1", principal: OWNER, at: now });
    assert.deepEqual(check.verify(good), OWNER);
    assert.equal(check.verify(good), undefined, "a second use is refused");

    const refused: Record<string, string> = {
      "addressed to another node": signNodeClaim(secret, { from: "n2", to: "n3", principal: OWNER, at: now }),
      "signed with another secret": signNodeClaim("another-secret-of-at-least-32-characters", { from: "n2", to: "n1", principal: OWNER, at: now }),
      "older than the window": signNodeClaim(secret, { from: "n2", to: "n1", principal: OWNER, at: now - DEFAULT_NODE_CLAIM_WINDOW_MS - 1 }),
      "later than the window": signNodeClaim(secret, { from: "n2", to: "n1", principal: OWNER, at: now + DEFAULT_NODE_CLAIM_WINDOW_MS + 1 }),
      "another person in a signed claim": (() => {
        const [, mac] = signNodeClaim(secret, { from: "n2", to: "n1", principal: OWNER, at: now }).split(".");
        const forged = Buffer.from(JSON.stringify({ v: 1, from: "n2", to: "n1", principal: { id: "person:bob", label: "bob" }, at: now, nonce: "x".repeat(22) })).toString("base64url");
        return `${forged}.${mac}`;
      })(),
      "the unsigned header of old": unsignedOnBehalfOf(OWNER),
      "empty": "",
    };
    for (const [why, claim] of Object.entries(refused)) assert.equal(check.verify(claim), undefined, why);
  });
});

describe("a node on a shared store without a node secret", () => {
  const start = (env: Record<string, string>): Promise<{ code: number | null; stderr: string }> =>
    new Promise((resolve) => {
      const dataDir = mkdtempSync(join(tmpdir(), "acp-remote-no-secret-"));
      const forget = removeOnExit(dataDir);
      // The store is never reached: the missing secret stops the start first.
      const args = [CLI, "serve", "--port", "0", "--data-dir", dataDir, "--token", "t-0123456789abcdef", "--store", "rediss://:pw@127.0.0.1:1/0"];
      execFile(NODE, args, { env: { ...process.env, ACP_REMOTE_TOKEN: "", ACP_REMOTE_NODE_SECRET: "", ACP_REMOTE_NODE_SECRET_FILE: "", ...env }, timeout: 60_000 }, (error, _stdout, stderr) => {
        rmSync(dataDir, { recursive: true, force: true });
        forget();
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stderr });
      });
    });

  it("refuses to start, saying which variable sets it", async () => {
    const none = await start({});
    assert.equal(none.code, 1, none.stderr);
    assert.match(none.stderr, /no node secret is set; set ACP_REMOTE_NODE_SECRET \(or --node-secret-file FILE\)/);
    const short = await start({ ACP_REMOTE_NODE_SECRET: "too-short" });
    assert.equal(short.code, 1, short.stderr);
    assert.match(short.stderr, /the node secret has 9 characters; it needs at least 32/);
  });
});

const skip = clusterToolsMissing("none", { redis: true });
if (skip !== undefined) process.stdout.write(`# node claim tests skipped: ${skip}\n`);

describe("three sidecars on TLS, on one Redis", { skip: skip ?? false }, () => {
  let redis: RedisServer;
  let cluster: Cluster;
  let ca: string;
  const clients: SdkClient[] = [];
  const http: ProtocolClient[] = [];
  const nodeUrl = (index: number): string => `https://127.0.0.1:${cluster.node(index).port}`;

  function connect(index: number): SdkClient {
    const client = connectSdkClient({ baseUrl: nodeUrl(index), token: cluster.token, transport: "websocket", ca });
    clients.push(client);
    return client;
  }

  async function initialize(index: number, headers: Record<string, string>): Promise<number> {
    const client = createClient("https1", nodeUrl(index), { ca });
    http.push(client);
    const answer = await client.request("POST", "/acp", { headers: { "content-type": "application/json", ...headers }, body: INITIALIZE });
    return answer.status;
  }

  before(async () => {
    const cert = await testCert();
    ca = cert.cert;
    const dir = mkdtempSync(join(tmpdir(), "acp-remote-node-tls-"));
    removeOnExit(dir);
    const keyFile = join(dir, "key.pem");
    writeFileSync(keyFile, cert.key, { mode: 0o600 });
    redis = await startRedisServer();
    cluster = await startCluster({
      nodes: 3,
      balancer: "none",
      // n2 has no --node-ca: the test certificate is no CA the system trusts, so n2's links cannot trust n1.
      args: (node) => [
        ...redis.serveArgs,
        "--node-id", node.id,
        "--cert", cert.certFile,
        "--key", keyFile,
        "--token", `mallory:${MALLORY_TOKEN}`,
        ...(node.id === "n2" ? [] : ["--node-ca", cert.certFile]),
      ],
    });
  });

  after(() =>
    endClusterTest({ cluster, redis }, async () => {
      await Promise.all(clients.map((c) => c.drop().catch(() => undefined)));
      await Promise.all(http.map((c) => c.close()));
    }),
  );

  it("a link with the node CA reaches a session on another node; the session's owner is served there", async () => {
    const owner = connect(0);
    await owner.initialize();
    const { sessionId } = await owner.connection.agent.request("session/new", { cwd: process.cwd(), mcpServers: [] });
    await owner.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "echo the owner's plans" }] });
    await owner.drop();

    const elsewhere = connect(2);
    await elsewhere.initialize();
    await elsewhere.connection.agent.request("session/load", { sessionId, cwd: process.cwd(), mcpServers: [] });
    assert.ok(texts(elsewhere.updates, "agent_message_chunk").includes("the owner's plans"));
    assert.deepEqual(await elsewhere.connection.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "echo over a checked link" }] }), { stopReason: "end_turn" });
    await elsewhere.drop();
  });

  it("regression: node links accepted any certificate (rejectUnauthorized: false); they refuse a peer certificate they do not trust", async () => {
    const owner = connect(0);
    await owner.initialize();
    const { sessionId } = await owner.connection.agent.request("session/new", { cwd: process.cwd(), mcpServers: [] });
    await owner.drop();

    const untrusting = connect(1);
    await untrusting.initialize();
    await assert.rejects(untrusting.connection.agent.request("session/load", { sessionId, cwd: process.cwd(), mcpServers: [] }), /runs on node n1/);
    assert.match(cluster.node(1).output(), /link to node n1 lost: node https:\/\/127\.0\.0\.1:\d+ cannot be reached: self[- ]signed certificate/);
  });

  it("regression: a client that knows the Redis contents could act for another person; it cannot", async () => {
    // What Redis holds once sessions were made and reached over a link between nodes.
    const raw = createRedisClient(redis.clientOptions());
    raw.on("error", () => {});
    await raw.connect();
    const values = new Set<string>();
    try {
      for (const key of (await raw.sendCommand(["KEYS", "*"])) as string[]) {
        const type = String(await raw.sendCommand(["TYPE", key]));
        const reply =
          type === "string" ? [await raw.sendCommand(["GET", key])]
          : type === "hash" ? await raw.sendCommand(["HGETALL", key])
          : type === "set" ? await raw.sendCommand(["SMEMBERS", key])
          : type === "list" ? await raw.sendCommand(["LRANGE", key, "0", "-1"])
          : type === "zset" ? await raw.sendCommand(["ZRANGE", key, "0", "-1"])
          : [];
        for (const value of reply as unknown[]) if (typeof value === "string" && value.length > 0) values.add(value);
      }
    } finally {
      raw.destroy();
    }
    assert.ok(values.size > 0, "Redis holds the cluster's state");
    assert.ok(![...values].some((v) => v.includes(CLUSTER_NODE_SECRET)), "the node secret is not in Redis");

    // Mallory has a token of her own, and every value in Redis.
    assert.equal(await initialize(0, { authorization: `Bearer ${MALLORY_TOKEN}` }), 200, "her own token works");
    // Header values: printable, no spaces.
    const candidates = [...values].filter((value) => value.length <= 4_096 && !/[^\x21-\x7e]/.test(value));
    for (const value of candidates) {
      const asKey = await initialize(0, { authorization: `Bearer ${value}`, [AcpExt.onBehalfOfHeader]: unsignedOnBehalfOf(OWNER) });
      assert.ok(asKey === 401 || asKey === 403, `a value of Redis as the nodes' key, for the owner: ${asKey}`);
    }
    for (const value of candidates) {
      const asClaim = await initialize(0, { authorization: `Bearer ${MALLORY_TOKEN}`, [AcpExt.onBehalfOfHeader]: value });
      assert.ok(asClaim === 401 || asClaim === 403, `a value of Redis as a claim: ${asClaim}`);
    }
    // A request naming a person is judged by its claim alone: her token does not carry it.
    assert.equal(await initialize(0, { authorization: `Bearer ${MALLORY_TOKEN}`, [AcpExt.onBehalfOfHeader]: unsignedOnBehalfOf(OWNER) }), 401);
  });
});
