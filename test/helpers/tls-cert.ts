// A self-signed certificate for 127.0.0.1 and localhost, made once per
// process; tests trust it through the client's `ca` option (or `--ca FILE`).
//
// The certificate lives in memory. Only a test that asks for `certFile` (to
// hand it to a child with --ca) gets a temporary folder, removed when the
// process exits; servers that only need `cert` and `key` (the benchmark's
// server children, which are killed rather than left to exit) write nothing.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generate } from "selfsigned";

/** Prefix of the folder that holds `certFile` in os.tmpdir(). */
export const CERT_DIR_PREFIX = "acp-remote-cert-";

export interface TestCert {
  cert: string;
  key: string;
  /** The certificate written to a file, for `--ca` (written on first use). */
  readonly certFile: string;
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
    let file: string | undefined;
    return {
      cert: pems.cert,
      key: pems.private,
      get certFile(): string {
        if (file === undefined) {
          const dir = mkdtempSync(join(tmpdir(), CERT_DIR_PREFIX));
          // The folder lives as long as the process: children are given the file with --ca.
          process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
          file = join(dir, "cert.pem");
          writeFileSync(file, pems.cert);
        }
        return file;
      },
    };
  });
  return made;
}
