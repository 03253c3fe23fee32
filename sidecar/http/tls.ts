// TLS material for the one port: `--cert/--key` files, or with `--tls` a
// self-signed certificate for localhost, 127.0.0.1, ::1 and the address the
// server is reached at (the bound host, or on every interface this machine's
// network addresses, one of which the pairing link names), made on first use
// in the data folder and reused afterwards (a client that pinned or trusted it
// keeps working across restarts). A kept certificate that does not cover the
// address the link names now (another network, another --host) is made anew:
// the link would otherwise open on a name mismatch no browser lets a person
// accept for good.
import { X509Certificate } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { isIP } from "node:net";
import { networkInterfaces, type NetworkInterfaceInfo } from "node:os";
import { join } from "node:path";
import { isWildcardHost, lanAddress } from "../../common/lan-address.ts";
import { makePrivateFolder, PRIVATE_FILE_MODE } from "../../common/private-files.ts";

export interface TlsMaterial {
  cert: string;
  key: string;
}

/** Validity of a generated certificate, in days. */
const SELF_SIGNED_VALIDITY_DAYS = 825;

export const SELF_SIGNED_CERT_FILE = "tls-cert.pem";
export const SELF_SIGNED_KEY_FILE = "tls-key.pem";

/** Names every self-signed certificate covers: this machine by its loopback names. */
const LOOPBACK_NAMES: readonly string[] = ["localhost", "127.0.0.1", "::1"];

/**
 * The certificate and key the server listens with, or undefined for
 * cleartext. `host` is the bound host: a self-signed certificate covers it, or
 * on every interface the machine's network addresses.
 */
/** What `--tls` asks for: certificate and key files, or a self-signed certificate kept in the data folder. */
export type TlsOption = { cert: string; key: string } | "self-signed";

export async function resolveTls(option: TlsOption | undefined, dataDir: string, host?: string): Promise<TlsMaterial | undefined> {
  if (option === undefined) return undefined;
  if (option === "self-signed") return selfSignedCertificate(dataDir, host);
  const [cert, key] = await Promise.all([readFile(option.cert, "utf8"), readFile(option.key, "utf8")]);
  return { cert, key };
}

/**
 * What the certificate for a server bound to `host` names: the loopback
 * names, and the host itself, or on every interface each network address of
 * the machine (the pairing link names the first IPv4 one; a phone may know
 * another). Link-local IPv6 addresses are left out: they need a zone no URL
 * of a certificate carries.
 */
function certificateNames(host: string | undefined, interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces()): string[] {
  const names = new Set(LOOPBACK_NAMES);
  if (host !== undefined && isWildcardHost(host)) {
    for (const addresses of Object.values(interfaces)) {
      for (const a of addresses ?? []) if (!a.internal && !a.address.toLowerCase().startsWith("fe80:")) names.add(a.address);
    }
  } else if (host !== undefined) {
    names.add(host.replace(/^\[(.*)\]$/, "$1"));
  }
  return [...names];
}

/** The address a link to a server bound to `host` names: the host, or on every interface the machine's network address. */
function linkAddress(host: string | undefined, interfaces: NodeJS.Dict<NetworkInterfaceInfo[]>): string | undefined {
  if (host === undefined) return undefined;
  return isWildcardHost(host) ? lanAddress(interfaces) : host.replace(/^\[(.*)\]$/, "$1");
}

/** Whether the certificate covers `name` (an IP address or a DNS name). */
function covers(cert: string, name: string): boolean {
  const x509 = new X509Certificate(cert);
  return (isIP(name) === 0 ? x509.checkHost(name) : x509.checkIP(name)) !== undefined;
}

export async function selfSignedCertificate(
  dataDir: string,
  host?: string,
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(),
): Promise<TlsMaterial> {
  const certPath = join(dataDir, SELF_SIGNED_CERT_FILE);
  const keyPath = join(dataDir, SELF_SIGNED_KEY_FILE);
  const link = linkAddress(host, interfaces);
  try {
    const [cert, key] = await Promise.all([readFile(certPath, "utf8"), readFile(keyPath, "utf8")]);
    if (link === undefined || covers(cert, link)) return { cert, key };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const now = new Date();
  // Loaded only to make a certificate: with its ASN.1 and X.509 packages it
  // is 3.9 MB of heap that every full collection of a server would mark.
  const { generate } = await import("selfsigned");
  const pems = await generate([{ name: "commonName", value: "localhost" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notBeforeDate: now,
    notAfterDate: new Date(now.getTime() + SELF_SIGNED_VALIDITY_DAYS * 24 * 60 * 60_000),
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        // DNS names are type 2, IP addresses type 7 (RFC 5280, GeneralName).
        altNames: certificateNames(host, interfaces).map((name) => (isIP(name) === 0 ? { type: 2, value: name } : { type: 7, ip: name })),
      },
    ],
  });
  makePrivateFolder(dataDir);
  // The certificate is no secret, but nobody but the server reads it here: private like the rest of the folder.
  await writeFile(keyPath, pems.private, { mode: PRIVATE_FILE_MODE });
  await writeFile(certPath, pems.cert, { mode: PRIVATE_FILE_MODE });
  return { cert: pems.cert, key: pems.private };
}
