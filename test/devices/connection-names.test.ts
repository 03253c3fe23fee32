// Which device a connection comes from, on a real server (`serve` on port 0,
// the fixture agent): the status names a paired device's connection by the
// device, and one made with the access token by its person.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Acp, PROTOCOL_VERSION } from "../../protocol/acp.ts";
import { connectionName } from "../../protocol/names.ts";
import type { RunningServer } from "../../sidecar/server/serve.ts";
import { call, openWs, serveFixture } from "../helpers/device-server.ts";
import type { WsTestClient } from "../helpers/ws-client.ts";

const MAIN = "main-token-names-0123456789abcdef";

describe("connections named by their device", () => {
  let dir: string;
  let server: RunningServer;
  const clients: WsTestClient[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "acp-remote-names-"));
    server = await serveFixture(dir, MAIN);
  });

  after(async () => {
    for (const c of clients) c.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function connect(token: string): Promise<void> {
    const client = await openWs(server.url, token);
    clients.push(client);
    const init = await call(client, 0, Acp.agent.initialize, { protocolVersion: PROTOCOL_VERSION, clientCapabilities: {} });
    assert.ok(init["result"], JSON.stringify(init));
  }

  test("regression: a phone's connection showed as 'owner', not the device's name; the access token's still shows as 'owner'", async () => {
    const { device, token } = await server.devices.pair("Pixel 8");
    await connect(token);
    await connect(MAIN);
    const connections = server.hub.status().connections;
    assert.equal(connections.length, 2);
    const names = connections.map((c) => connectionName(c, server.devices.list())).sort();
    assert.deepEqual(names, ["Pixel 8", "owner"]);
    assert.equal(connections.find((c) => c.deviceId !== undefined)?.deviceId, device.deviceId);
  });
});
