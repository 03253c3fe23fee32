// TLS material for the one port: `--cert/--key` files, or with `--tls` a
// self-signed certificate for localhost, 127.0.0.1 and ::1, made on first use
// in the data folder and reused afterwards (a client that pinned or trusted it
// keeps working across restarts).
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { generate } from "selfsigned";
import type { ServeOptions } from "../options.ts";

export interface TlsMaterial {
  cert: string;
  key: string;
}

/** Validity of a generated certificate, in days. */
export const SELF_SIGNED_VALIDITY_DAYS = 825;

export const SELF_SIGNED_CERT_FILE = "tls-cert.pem";
export const SELF_SIGNED_KEY_FILE = "tls-key.pem";

/** The certificate and key the server listens with, or undefined for cleartext. */
export async function resolveTls(option: ServeOptions["tls"], dataDir: string): Promise<TlsMaterial | undefined> {
  if (option === undefined) return undefined;
  if (option === "self-signed") return selfSignedCertificate(dataDir);
  const [cert, key] = await Promise.all([readFile(option.cert, "utf8"), readFile(option.key, "utf8")]);
  return { cert, key };
}

export async function selfSignedCertificate(dataDir: string): Promise<TlsMaterial> {
  const certPath = join(dataDir, SELF_SIGNED_CERT_FILE);
  const keyPath = join(dataDir, SELF_SIGNED_KEY_FILE);
  try {
    const [cert, key] = await Promise.all([readFile(certPath, "utf8"), readFile(keyPath, "utf8")]);
    return { cert, key };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const now = new Date();
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
        altNames: [
          { type: 2, value: "localhost" },
          { type: 7, ip: "127.0.0.1" },
          { type: 7, ip: "::1" },
        ],
      },
    ],
  });
  await mkdir(dataDir, { recursive: true });
  await writeFile(keyPath, pems.private, { mode: 0o600 });
  await writeFile(certPath, pems.cert, { mode: 0o644 });
  return { cert: pems.cert, key: pems.private };
}
