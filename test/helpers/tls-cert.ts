// A self-signed certificate for 127.0.0.1 and localhost, made once per test
// process; tests trust it through the client's `ca` option (or `--ca FILE`).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "selfsigned";

export interface TestCert {
  cert: string;
  key: string;
  /** The certificate written to a file, for `--ca`. */
  certFile: string;
}

let made: Promise<TestCert> | undefined;

export function testCert(): Promise<TestCert> {
  made ??= generate([{ name: "commonName", value: "localhost" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true },
      { name: "subjectAltName", altNames: [{ type: 2, value: "localhost" }, { type: 7, ip: "127.0.0.1" }] },
    ],
  }).then((pems) => {
    const dir = mkdtempSync(join(tmpdir(), "acp-remote-cert-"));
    // The folder lives as long as the test process: children are given the file with --ca.
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    const certFile = join(dir, "cert.pem");
    writeFileSync(certFile, pems.cert);
    return { cert: pems.cert, key: pems.private, certFile };
  });
  return made;
}
