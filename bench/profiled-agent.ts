// The fixture agent as run under `--cpu-prof`: the hub ends agents with
// SIGTERM, which would kill the process before V8 writes its profile, so
// SIGTERM becomes a normal exit here.
process.on("SIGTERM", () => process.exit(0));
await import("../test/fixtures/agent.ts");
