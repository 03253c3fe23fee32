// The Redis store's layout, versioned: the key `acp-remote:schema` holds the
// version the store is at (absent in a store from before versions were kept,
// whose layout is version 1), and REDIS_MIGRATIONS take it from each version
// to the next, in order, when a node opens the store. A store at a version
// above the last one here was written by a newer acp-remote: the node refuses
// it before it writes anything, so the nodes of one store run one version, or
// the newer one alone changes the layout.
//
// Several nodes may open the store at once: a migration must be idempotent
// (run twice, or by two nodes at the same time, it leaves what it leaves run
// once), and the version is only ever raised.
import { latestVersion, type Migration, StoreVersionError } from "../schema-version.ts";
import { LuaScript, type RedisConnection } from "./connection.ts";
import { keys } from "./keys.ts";

export const REDIS_MIGRATIONS: readonly Migration<RedisConnection, Promise<void>>[] = [
  {
    version: 1,
    summary: "the layout described in ./index.ts",
    // Nothing to change: the layout of every store so far.
    up: async () => undefined,
  },
];

/** The version this acp-remote writes: the last migration's. */
export const REDIS_SCHEMA_VERSION = latestVersion(REDIS_MIGRATIONS);

/** KEYS: the schema key. ARGV: a version. Raises the key to it, never lowers it; returns what it held (0 for none). */
const RAISE = new LuaScript(`
local held = tonumber(redis.call('GET', KEYS[1]) or '0')
if held < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return held
`);

/** The version the store is at: 0 when the key is absent. */
async function storeSchemaVersion(redis: RedisConnection): Promise<number> {
  const held = await redis.command(["GET", keys.schema]);
  if (held === null) return 0;
  const version = Number(held);
  if (!Number.isInteger(version) || version < 0) throw new Error(`the Redis store's ${keys.schema} holds ${JSON.stringify(held)}, which is not a schema version`);
  return version;
}

/**
 * Runs the migrations the store has not had, in order, and raises its version
 * after each; returns the versions before and after. `where` names the store
 * in errors. Refuses (StoreVersionError) a store a newer acp-remote wrote.
 */
export async function openSchema(
  redis: RedisConnection,
  where: string,
  migrations: readonly Migration<RedisConnection, Promise<void>>[] = REDIS_MIGRATIONS,
): Promise<{ from: number; to: number }> {
  const from = await storeSchemaVersion(redis);
  const known = latestVersion(migrations);
  if (from > known) throw new StoreVersionError(`the Redis store at ${where}`, from, known, "Run that acp-remote or a later one on every node of the store; nothing in it was changed");
  let at = from;
  for (const migration of migrations) {
    if (migration.version <= at) continue;
    await migration.up(redis);
    const held = Number(await redis.eval(RAISE, [keys.schema], [migration.version]));
    // Another node of a newer acp-remote raised it meanwhile: this one stops here.
    if (held > known) throw new StoreVersionError(`the Redis store at ${where}`, held, known, "Run that acp-remote or a later one on every node of the store");
    at = Math.max(migration.version, held);
  }
  return { from, to: at };
}
