// One table of cases (rows-*.ts) run against both implementations of the
// shared store (design: decision 5): the embedded node:sqlite store and the
// Redis store on a real redis-server. Each row runs on a fresh store. Rows
// that need two distinct nodes run on Redis only; the embedded store is one
// node by design, and says so as the reason it skips them.
import { after, before, describe, test } from "node:test";
import { redisImplementation, sqliteImplementation, type Implementation, type Row } from "./harness.ts";
import { redisServerPath, startRedisServer, type RedisServer } from "../helpers/redis-server.ts";
import { jobRows } from "./rows-jobs.ts";
import { notifyRows } from "./rows-notify.ts";
import { sessionRows } from "./rows-sessions.ts";
import { sharedRows } from "./rows-shared.ts";

const ROWS: Row[] = [...sessionRows, ...jobRows, ...sharedRows, ...notifyRows];

function table(implementation: Implementation): void {
  for (const row of ROWS) {
    const skip = row.cluster && implementation.kind === "sqlite" ? "the embedded store is one node: this row needs two" : false;
    test(row.name, { skip }, async () => {
      const ctx = await implementation.fresh();
      try {
        await row.run(ctx);
      } finally {
        await ctx.close();
      }
    });
  }
}

describe("shared store: sqlite", () => {
  table(sqliteImplementation);
});

const installed = redisServerPath() !== undefined;
if (!installed) console.log("# shared store: redis skipped: redis-server is not installed (CI installs it)");

describe("shared store: redis", { skip: installed ? false : "redis-server is not installed" }, () => {
  let server: RedisServer | undefined;
  before(async () => {
    server = await startRedisServer();
  });
  after(async () => {
    await server?.close();
  });
  table(redisImplementation(() => server!));
});
