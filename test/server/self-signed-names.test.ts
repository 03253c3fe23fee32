// The self-signed certificate of `--tls` names the address the pairing link
// names: with `--host 0.0.0.0` the link carries this machine's network
// address, so the certificate must cover it, or the phone that opens the link
// meets a name mismatch. The real server on every interface, and a real TLS
// client that trusts the certificate and checks the name; a kept certificate
// that does not cover the link's address is made anew.
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import https from "node:https";
import type { NetworkInterfaceInfo } from "node:os";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { lanAddress, lanUrl } from "../../common/lan-address.ts";
import { pairingLink } from "../../sidecar/cli/pairing-banner.ts";
import { HEALTH_PATH } from "../../sidecar/server/health.ts";
import { SELF_SIGNED_CERT_FILE, selfSignedCertificate } from "../../sidecar/http/tls.ts";
import type { RunningServer } from "../../sidecar/server/serve.ts";
import { serveFixtureAgent } from "../helpers/sidecar-server.ts";
import { TOKEN } from "../helpers/transport-server.ts";

const dirs: string[] = [];
const servers: RunningServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "acp-remote-tls-"));
  dirs.push(dir);
  return dir;
}

/** A machine with one network interface at `address`. */
function interfacesWith(address: string): NodeJS.Dict<NetworkInterfaceInfo[]> {
  const info = { address, netmask: "255.255.255.0", family: "IPv4", mac: "02:00:00:00:00:01", internal: false, cidr: `${address}/24` } as const;
  return { lo: [{ ...info, address: "127.0.0.1", internal: true, cidr: "127.0.0.1/8" }], eth0: [info] };
}

const covers = (cert: string, ip: string): boolean => new X509Certificate(cert).checkIP(ip) !== undefined;

/** GET `url` over TLS, trusting `ca` and checking the server's name as any client does: the status, or the TLS error's code. */
function fetchTrusting(url: string, ca: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = https.get(url, { ca, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

const address = lanAddress();

describe("the self-signed certificate and the pairing link", () => {
  test(
    "regression: with --host 0.0.0.0 --tls the pairing link named this machine's network address, which the certificate did not cover; a client that trusts the certificate opens the link",
    { skip: address === undefined ? "this machine has no network address besides loopback" : false },
    async () => {
      const dir = dataDir();
      const server = await serveFixtureAgent({ host: "0.0.0.0", tokens: [TOKEN], dataDir: dir, tls: "self-signed" });
      servers.push(server);
      const link = pairingLink(lanUrl(server.url, "0.0.0.0"), TOKEN);
      const linkUrl = new URL(link);
      assert.equal(linkUrl.hostname, address, "the link names the network address");
      const cert = readFileSync(join(dir, SELF_SIGNED_CERT_FILE), "utf8");
      assert.ok(covers(cert, address!), `the certificate covers ${address}`);
      assert.equal(await fetchTrusting(`${linkUrl.origin}${HEALTH_PATH}`, cert), 200);
      // Loopback stays covered.
      assert.equal(await fetchTrusting(`https://127.0.0.1:${linkUrl.port}${HEALTH_PATH}`, cert), 200);
    },
  );

  test("a kept certificate that does not cover the link's address is made anew; one that does is kept", async () => {
    const dir = dataDir();
    const loopbackOnly = await selfSignedCertificate(dir, "127.0.0.1");
    assert.ok(!covers(loopbackOnly.cert, "192.0.2.77"));
    const onTheNetwork = await selfSignedCertificate(dir, "0.0.0.0", interfacesWith("192.0.2.77"));
    assert.notEqual(onTheNetwork.cert, loopbackOnly.cert, "made anew");
    assert.ok(covers(onTheNetwork.cert, "192.0.2.77"));
    assert.ok(covers(onTheNetwork.cert, "127.0.0.1"));
    assert.equal(readFileSync(join(dir, SELF_SIGNED_CERT_FILE), "utf8"), onTheNetwork.cert, "and kept in the data folder");
    const again = await selfSignedCertificate(dir, "0.0.0.0", interfacesWith("192.0.2.77"));
    assert.equal(again.cert, onTheNetwork.cert, "kept while it covers the link's address");
    const loopbackAgain = await selfSignedCertificate(dir, "127.0.0.1");
    assert.equal(loopbackAgain.cert, onTheNetwork.cert, "loopback is covered by every certificate");
  });

  test("a named host is covered as a name", async () => {
    const { cert } = await selfSignedCertificate(dataDir(), "dev-box.example.com");
    assert.equal(new X509Certificate(cert).checkHost("dev-box.example.com"), "dev-box.example.com");
    assert.equal(new X509Certificate(cert).checkHost("localhost"), "localhost");
  });
});
