// A certificate authority of a test's own, made with openssl, and a server
// certificate it signs for a host name (as a real domain's would be: a
// leaf with the name in subjectAltName, for serverAuth, under a CA). A browser
// trusts it without a system store through the CA's SPKI hash
// (`--ignore-certificate-errors-spki-list`, real TLS all the same); Node
// clients through `ca`. The files live in a temporary folder, removed by
// `remove()` (or when the process exits).
import { spawnSync } from "node:child_process";
import { createHash, X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeOnExit } from "./managed-process.ts";

/** Days the certificates are valid: a test's run, well inside what browsers accept of a leaf (398). */
const VALID_DAYS = 2;

export interface TestCa {
  /** The CA's certificate (PEM): what a Node client passes as `ca`. */
  caPem: string;
  /** The server's certificate followed by the CA's (PEM file): nginx's ssl_certificate. */
  chainFile: string;
  /** The server's private key (PEM file). */
  keyFile: string;
  /** base64 of the SHA-256 of the CA's SubjectPublicKeyInfo, for Chromium's --ignore-certificate-errors-spki-list. */
  spkiHash: string;
  remove(): void;
}

function openssl(args: string[], cwd: string): void {
  const result = spawnSync("openssl", args, { cwd, encoding: "utf8" });
  if (result.error) throw new Error(`openssl could not run: ${result.error.message} (install the Debian package openssl)`);
  if (result.status !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`);
}

/** A CA and a certificate it signs for `hostname` (P-256 keys). */
export function makeTestCa(hostname: string): TestCa {
  const dir = mkdtempSync(join(tmpdir(), "acp-remote-ca-"));
  const forget = removeOnExit(dir);
  const remove = (): void => {
    rmSync(dir, { recursive: true, force: true });
    forget();
  };
  try {
    const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
    openssl(["req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", String(VALID_DAYS), "-subj", "/CN=acp-remote test CA",
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"], dir);
    openssl(["req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", `/CN=${hostname}`], dir);
    writeFileSync(join(dir, "server.ext"), `subjectAltName=DNS:${hostname}\nextendedKeyUsage=serverAuth\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n`);
    openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out", "server.crt", "-days", String(VALID_DAYS), "-extfile", "server.ext"], dir);
    const caPem = readFileSync(join(dir, "ca.crt"), "utf8");
    const chainFile = join(dir, "chain.crt");
    writeFileSync(chainFile, readFileSync(join(dir, "server.crt"), "utf8") + caPem);
    const spki = new X509Certificate(caPem).publicKey.export({ type: "spki", format: "der" });
    return { caPem, chainFile, keyFile: join(dir, "server.key"), spkiHash: createHash("sha256").update(spki).digest("base64"), remove };
  } catch (error) {
    remove();
    throw error;
  }
}
