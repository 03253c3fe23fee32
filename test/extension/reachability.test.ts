// Whether the Connect a Device panel tells the person a phone cannot reach
// the server, and which address its link names.
import assert from "node:assert/strict";
import type { NetworkInterfaceInfo } from "node:os";
import { it } from "node:test";
import { reachability } from "../../extension/pairing/reachability.ts";

const LAN = { eth0: [{ address: "192.168.1.20", family: "IPv4", internal: false, netmask: "255.255.255.0", mac: "00:00:00:00:00:01", cidr: null } as NetworkInterfaceInfo] };
const NO_LAN = { lo: [{ address: "127.0.0.1", family: "IPv4", internal: true, netmask: "255.0.0.0", mac: "00:00:00:00:00:00", cidr: null } as NetworkInterfaceInfo] };

it("reachability | loopback that nothing forwards: this machine only, the panel offers LAN + TLS", () => {
  const server = { url: "http://127.0.0.1:8765", host: "127.0.0.1" };
  assert.deepEqual(reachability(server, "http://127.0.0.1:8765/", LAN), { url: "http://127.0.0.1:8765", reachable: false, forwarded: false });
  assert.deepEqual(reachability({ url: "http://localhost:8765", host: "localhost" }, "http://localhost:8765", LAN), { url: "http://localhost:8765", reachable: false, forwarded: false });
});

it("reachability | a forwarded port: the editor's address, as it is, for the sidecar to accept", () => {
  const server = { url: "http://127.0.0.1:8765", host: "127.0.0.1" };
  assert.deepEqual(reachability(server, "https://box-8765.example.dev/", LAN), { url: "https://box-8765.example.dev", reachable: true, forwarded: true });
  // code-server's proxy: a path prefix on the editor's own address.
  assert.deepEqual(reachability(server, "http://127.0.0.1:8080/proxy/8765/", LAN), { url: "http://127.0.0.1:8080/proxy/8765", reachable: true, forwarded: true });
});

it("reachability | a public URL the server was given (--public-url): the link names it, whatever the editor forwards", () => {
  const server = { url: "http://127.0.0.1:8765", host: "127.0.0.1", publicUrls: ["https://box.example/acp-remote"] };
  assert.deepEqual(reachability(server, "https://box-8765.example.dev/", LAN), { url: "https://box.example/acp-remote", reachable: true, forwarded: false });
  assert.deepEqual(reachability(server, "http://127.0.0.1:8765", LAN), { url: "https://box.example/acp-remote", reachable: true, forwarded: false });
});

it("reachability | every interface: this machine's network address; none: unreachable", () => {
  const server = { url: "https://127.0.0.1:8765", host: "0.0.0.0" };
  assert.deepEqual(reachability(server, "https://127.0.0.1:8765", LAN), { url: "https://192.168.1.20:8765", reachable: true, forwarded: false });
  assert.deepEqual(reachability(server, "https://127.0.0.1:8765", NO_LAN), { url: "https://127.0.0.1:8765", reachable: false, forwarded: false });
});

it("reachability | a network address the server binds: as it is", () => {
  const server = { url: "https://10.0.0.5:8765", host: "10.0.0.5" };
  assert.deepEqual(reachability(server, "https://10.0.0.5:8765", NO_LAN), { url: "https://10.0.0.5:8765", reachable: true, forwarded: false });
});
