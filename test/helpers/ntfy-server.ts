// An ntfy server stand-in for tests: plain HTTP on loopback that takes JSON
// publishing as ntfy does (POST to its root, the topic in the body), keeps
// each message with the Authorization it came with, and lets a test wait for
// them.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface NtfyPublished {
  message: Record<string, unknown>;
  authorization: string | undefined;
  /** performance.now() when its body was in. */
  receivedAt: number;
}

export interface NtfyServer {
  /** The server's base URL, without a trailing slash. */
  readonly url: string;
  readonly published: NtfyPublished[];
  /** Resolves once `count` messages were published; rejects after `deadlineMs`. */
  waitFor(count: number, deadlineMs?: number): Promise<NtfyPublished[]>;
  close(): Promise<void>;
}

export async function startNtfyServer(): Promise<NtfyServer> {
  const published: NtfyPublished[] = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const receivedAt = performance.now();
      if (req.method !== "POST" || req.url !== "/") {
        res.writeHead(404).end();
        return;
      }
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      } catch {
        res.writeHead(400).end('{"error":"invalid JSON"}');
        return;
      }
      published.push({ message, authorization: req.headers.authorization, receivedAt });
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: String(published.length), event: "message", topic: message["topic"] }));
      for (const wake of [...waiters]) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    published,
    waitFor(count, deadlineMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (published.length < count) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(published);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`${published.length} of ${count} ntfy messages within ${deadlineMs} ms`));
        }, deadlineMs);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
