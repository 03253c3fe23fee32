// One port for everything: the sniffer hands h2c and HTTP/1.1 to their
// servers and keeps HTTP/1.1's timeouts in force; TLS offers h2 and
// http/1.1 by ALPN; independent clients (curl) speak to it; shutdown ends
// streams without ending sessions; the self-signed certificate is made once.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import tls from "node:tls";
import { X509Certificate } from "node:crypto";
import { after, afterEach, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { HTTP2_PREFACE } from "../../sidecar/http/listener.ts";
import { resolveTls, SELF_SIGNED_CERT_FILE, SELF_SIGNED_KEY_FILE, selfSignedCertificate } from "../../sidecar/http/tls.ts";
import { createClient, isSse } from "../helpers/http-clients.ts";
import type { OpenedSse } from "../helpers/http-clients.ts";
import { TransportHub } from "../helpers/transport-hub.ts";
import { startTransportServer, TOKEN } from "../helpers/transport-server.ts";
import type { StartedServer } from "../helpers/transport-server.ts";

const run = promisify(execFile);
const AUTH = { authorization: `Bearer ${TOKEN}` };
const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: Acp.agent.initialize,
  params: { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} },
});

/** Connects, writes `bytes`, and resolves with everything received when the server closes the socket. */
function rawExchange(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
    if (bytes.length > 0) socket.write(bytes);
  });
}

describe("the cleartext listener (sniffer)", () => {
  let server: StartedServer;
  afterEach(async () => {
    await server.close();
  });

  it("a slowloris client that never finishes its headers is cut (HTTP/1.1 headersTimeout behind the sniffer)", async () => {
    server = await startTransportServer({ limits: { headersTimeoutMs: 300, requestTimeoutMs: 600 } });
    const received = await rawExchange(server.port, "POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    assert.match(received, /^HTTP\/1\.1 408 /, "the server answers 408 and closes");
  });

  it("over TLS too: an HTTP/1.1 slowloris client is cut by headersTimeout", async () => {
    server = await startTransportServer({ tls: true, limits: { headersTimeoutMs: 300, requestTimeoutMs: 600 } });
    const received = await new Promise<string>((resolve, reject) => {
      const socket = tls.connect({ port: server.port, host: "127.0.0.1", servername: "localhost", ca: server.ca, ALPNProtocols: ["http/1.1"] }, () => {
        socket.write("POST /acp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
      });
      const chunks: Buffer[] = [];
      socket.on("data", (c: Buffer) => chunks.push(c));
      socket.on("error", reject);
      socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
    });
    assert.match(received, /^HTTP\/1\.1 408 /);
  });

  it("a client that sends nothing at all is dropped after the sniff timeout", async () => {
    server = await startTransportServer({ limits: { sniffTimeoutMs: 300 } });
    assert.equal(await rawExchange(server.port, ""), "");
  });

  it("a client that stops inside the HTTP/2 preface is dropped after the sniff timeout", async () => {
    server = await startTransportServer({ limits: { sniffTimeoutMs: 300 } });
    assert.equal(await rawExchange(server.port, HTTP2_PREFACE.subarray(0, 10)), "");
  });

  it("an SSE stream outlives requestTimeout: the timeout is for receiving the request, not for the answer", async () => {
    server = await startTransportServer({ limits: { headersTimeoutMs: 200, requestTimeoutMs: 300, keepAliveMs: 100 } });
    const client = createClient("http1", server.url);
    try {
      const init = await client.request("POST", "/acp", { headers: { ...AUTH, "content-type": "application/json" }, body: INITIALIZE });
      const connectionId = String(init.headers["acp-connection-id"]);
      const opened = await client.openSse("/acp", { ...AUTH, accept: "text/event-stream", "acp-connection-id": connectionId });
      assert.ok(isSse(opened));
      // Several check intervals and timeouts pass: 15 keep-alives 100 ms apart are five request timeouts.
      await opened.reader.commentsAtLeast(15);
      assert.equal(opened.reader.isEnded, false, "the stream is still open");
      const posted = await client.request("POST", "/acp", {
        headers: { ...AUTH, "content-type": "application/json", "acp-connection-id": connectionId },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: Acp.agent.session.new, params: { cwd: "/tmp", mcpServers: [] } }),
      });
      assert.equal(posted.status, 202);
      assert.equal(((await opened.reader.next()) as { id: number }).id, 1, "and still delivers");
      opened.close();
    } finally {
      await client.close();
    }
  });

  it("an idle HTTP/2 connection is closed after http2IdleMs (GOAWAY); one with an SSE stream is kept by its keep-alives", async () => {
    server = await startTransportServer({ limits: { http2IdleMs: 500, keepAliveMs: 100 } });
    // The initialize goes on its own connection, so that the streaming one
    // opens its stream at once and is never idle.
    const setup = createClient("http1", server.url);
    const init = await setup.request("POST", "/acp", { headers: { ...AUTH, "content-type": "application/json" }, body: INITIALIZE });
    await setup.close();
    const idle = http2.connect(server.url);
    const busy = createClient("h2c", server.url);
    try {
      const idleClosed = new Promise<void>((resolve) => idle.once("close", () => resolve()));
      const opened = (await busy.openSse("/acp", { ...AUTH, accept: "text/event-stream", "acp-connection-id": String(init.headers["acp-connection-id"]) })) as OpenedSse;
      await idleClosed;
      // Three idle times pass on the server's clock: 15 more keep-alives, 100 ms apart.
      await opened.reader.commentsAtLeast(opened.reader.comments + 15);
      assert.equal(opened.reader.isEnded, false, "the stream with keep-alives is still open");
      opened.close();
    } finally {
      idle.destroy();
      await busy.close();
    }
  });

  it("the SSE stream sends keep-alive comments", async () => {
    server = await startTransportServer({ limits: { keepAliveMs: 100 } });
    const client = createClient("h2c", server.url);
    try {
      const init = await client.request("POST", "/acp", { headers: { ...AUTH, "content-type": "application/json" }, body: INITIALIZE });
      const opened = (await client.openSse("/acp", { ...AUTH, accept: "text/event-stream", "acp-connection-id": String(init.headers["acp-connection-id"]) })) as OpenedSse;
      const deadline = Date.now() + 20_000;
      while (opened.reader.comments < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.ok(opened.reader.comments >= 2);
      opened.close();
    } finally {
      await client.close();
    }
  });

  it("server close ends SSE streams and detaches (never closes) the connection", async () => {
    server = await startTransportServer();
    const client = createClient("h2c", server.url);
    const init = await client.request("POST", "/acp", { headers: { ...AUTH, "content-type": "application/json" }, body: INITIALIZE });
    const connectionId = String(init.headers["acp-connection-id"]);
    const opened = (await client.openSse("/acp", { ...AUTH, accept: "text/event-stream", "acp-connection-id": connectionId })) as OpenedSse;
    await server.close();
    await opened.reader.ended;
    const hub = server.hub as TransportHub;
    assert.deepEqual(hub.events.detached, [connectionId]);
    assert.deepEqual(hub.events.closed, []);
    await client.close();
  });
});

describe("shutdown while an initialize is under way", () => {
  it("the answer is 503 and the new connection detaches like the others", async () => {
    const hub = new TransportHub();
    let release: () => void = () => {};
    hub.initializeGate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await startTransportServer({ hub });
    const client = createClient("h2c", server.url);
    try {
      const answer = client.request("POST", "/acp", { headers: { ...AUTH, "content-type": "application/json" }, body: INITIALIZE });
      await new Promise<void>((resolve) => {
        const poll = () => (hub.live.size > 0 ? resolve() : setTimeout(poll, 10));
        poll();
      });
      const closed = server.close();
      release();
      const response = await answer;
      assert.equal(response.status, 503);
      await closed;
      assert.equal(hub.live.size, 0);
      assert.equal(hub.events.detached.length, 1);
      assert.equal(hub.events.closed.length, 0);
    } finally {
      await client.close();
    }
  });
});

describe("independent clients: curl", () => {
  let server: StartedServer;
  let tlsServer: StartedServer;
  let caFile: string;
  before(async () => {
    server = await startTransportServer();
    tlsServer = await startTransportServer({ tls: true });
    caFile = join(mkdtempSync(join(tmpdir(), "acp-curl-")), "ca.pem");
    writeFileSync(caFile, tlsServer.ca ?? "");
  });
  after(async () => {
    await server.close();
    await tlsServer.close();
    rmSync(dirname(caFile), { recursive: true, force: true });
  });

  /** curl's status line, headers and body (`-i`). */
  async function curl(args: string[]): Promise<{ version: string; status: number; head: string; body: string }> {
    const { stdout } = await run("curl", ["-sS", "-i", "--max-time", "30", ...args]);
    const split = stdout.indexOf("\r\n\r\n");
    const head = stdout.slice(0, split);
    const match = /^HTTP\/(\S+) (\d{3})/.exec(head);
    assert.ok(match, `a status line: ${head}`);
    return { version: match[1] ?? "", status: Number(match[2]), head, body: stdout.slice(split + 4) };
  }

  const post = (body: string, extra: string[] = []) => [
    "-X", "POST", "-H", `Authorization: Bearer ${TOKEN}`, "-H", "Content-Type: application/json", ...extra, "--data-binary", body,
  ];

  for (const [flag, version] of [["--http2-prior-knowledge", "2"], ["--http1.1", "1.1"]] as const) {
    it(`curl ${flag}: POST | initialize without Acp-Connection-Id | 200 with JSON body`, async () => {
      const response = await curl([flag, ...post(INITIALIZE), `${server.acpUrl}`]);
      assert.equal(response.version, version);
      assert.equal(response.status, 200);
      assert.match(response.head, /acp-connection-id: \S+/i);
      assert.equal(typeof (JSON.parse(response.body) as { result: { connectionId: string } }).result.connectionId, "string");
    });

    it(`curl ${flag}: 415 | POST Content-Type is not application/json`, async () => {
      const response = await curl([flag, "-X", "POST", "-H", `Authorization: Bearer ${TOKEN}`, "-H", "Content-Type: text/plain", "--data-binary", INITIALIZE, server.acpUrl]);
      assert.equal(response.status, 415);
    });

    it(`curl ${flag}: 406 | GET Accept lacks text/event-stream`, async () => {
      const response = await curl([flag, "-H", `Authorization: Bearer ${TOKEN}`, "-H", "Acp-Connection-Id: x", server.acpUrl]);
      assert.equal(response.status, 406);
    });

    it(`curl ${flag}: 501 | Batch JSON-RPC request`, async () => {
      const first = await curl([flag, ...post(INITIALIZE), server.acpUrl]);
      const connectionId = /acp-connection-id: (\S+)/i.exec(first.head)?.[1] ?? "";
      const response = await curl([flag, ...post(`[${INITIALIZE}]`, ["-H", `Acp-Connection-Id: ${connectionId}`]), server.acpUrl]);
      assert.equal(response.status, 501);
    });
  }

  it("curl --http2 over TLS: ALPN picks h2; initialize answers 200", async () => {
    const response = await curl(["--http2", "--cacert", caFile, ...post(INITIALIZE), tlsServer.acpUrl.replace("127.0.0.1", "localhost")]);
    assert.equal(response.version, "2");
    assert.equal(response.status, 200);
  });

  it("curl --http1.1 over TLS: ALPN picks http/1.1; initialize answers 200", async () => {
    const response = await curl(["--http1.1", "--cacert", caFile, ...post(INITIALIZE), tlsServer.acpUrl]);
    assert.equal(response.version, "1.1");
    assert.equal(response.status, 200);
  });
});

describe("TLS material", () => {
  it("--tls: a self-signed certificate for localhost, 127.0.0.1 and ::1, made once in the data folder and reused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-tls-"));
    try {
      const first = await selfSignedCertificate(dir);
      const cert = new X509Certificate(first.cert);
      assert.match(cert.subjectAltName ?? "", /DNS:localhost/);
      assert.match(cert.subjectAltName ?? "", /IP Address:127\.0\.0\.1/);
      assert.match(cert.subjectAltName ?? "", /IP Address:0:0:0:0:0:0:0:1|IP Address:::1/);
      assert.equal(readFileSync(join(dir, SELF_SIGNED_CERT_FILE), "utf8"), first.cert);
      const second = await resolveTls("self-signed", dir);
      assert.deepEqual(second, first, "the second start reuses the files");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("--cert/--key: the files are loaded as given", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-tls-"));
    try {
      const made = await selfSignedCertificate(dir);
      const loaded = await resolveTls({ cert: join(dir, SELF_SIGNED_CERT_FILE), key: join(dir, SELF_SIGNED_KEY_FILE) }, "/nonexistent");
      assert.deepEqual(loaded, made);
      await assert.rejects(resolveTls({ cert: join(dir, "missing.pem"), key: join(dir, "missing.pem") }, dir), /ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the TLS port offers h2 and http/1.1 by ALPN", async () => {
    const server = await startTransportServer({ tls: true });
    try {
      for (const protocol of ["h2", "http/1.1"]) {
        const negotiated = await new Promise<string | false>((resolve, reject) => {
          const socket = tls.connect({ port: server.port, host: "127.0.0.1", servername: "localhost", ca: server.ca, ALPNProtocols: [protocol] }, () => {
            resolve(socket.alpnProtocol ?? false);
            socket.destroy();
          });
          socket.on("error", reject);
        });
        assert.equal(negotiated, protocol);
      }
    } finally {
      await server.close();
    }
  });
});
