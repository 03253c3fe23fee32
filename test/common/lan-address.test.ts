// The pairing link's address: a server on every interface is named by this
// machine's network address, anything else as it is.
import assert from "node:assert/strict";
import type { NetworkInterfaceInfo } from "node:os";
import { it } from "node:test";
import { isWildcardHost, lanAddress, lanUrl } from "../../common/lan-address.ts";

const nic = (address: string, family: "IPv4" | "IPv6", internal: boolean): NetworkInterfaceInfo =>
  ({ address, family, internal, netmask: "", mac: "00:00:00:00:00:00", cidr: null, ...(family === "IPv6" ? { scopeid: 0 } : {}) }) as NetworkInterfaceInfo;

const MACHINE = {
  lo: [nic("127.0.0.1", "IPv4", true), nic("::1", "IPv6", true)],
  eth0: [nic("fe80::1", "IPv6", false), nic("192.168.1.20", "IPv4", false)],
};

it("lan address | the first IPv4 address that is not loopback; none on a machine with loopback only", () => {
  assert.equal(lanAddress(MACHINE), "192.168.1.20");
  assert.equal(lanAddress({ lo: MACHINE.lo }), undefined);
});

it("lan url | a wildcard bind gets the network address, port and scheme kept; other binds keep their URL", () => {
  assert.equal(lanUrl("https://127.0.0.1:8765", "0.0.0.0", MACHINE), "https://192.168.1.20:8765");
  assert.equal(lanUrl("http://[::1]:8765", "::", MACHINE), "http://192.168.1.20:8765");
  assert.equal(lanUrl("http://127.0.0.1:8765", "127.0.0.1", MACHINE), "http://127.0.0.1:8765");
  assert.equal(lanUrl("https://10.0.0.5:8765", "10.0.0.5", MACHINE), "https://10.0.0.5:8765");
  assert.equal(lanUrl("https://127.0.0.1:8765", "0.0.0.0", { lo: MACHINE.lo }), "https://127.0.0.1:8765", "no network: the URL as it is");
  assert.equal(isWildcardHost("0.0.0.0"), true);
  assert.equal(isWildcardHost("localhost"), false);
});
