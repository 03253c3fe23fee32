// What `acp-remote serve` prints for pairing: the link with the token in the
// fragment and its QR code on a terminal; on anything else, no token at all.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { pairingBanner, pairingLink } from "../../sidecar/cli/pairing-banner.ts";

const TOKEN = "tok_en-0123456789abcdef";

describe("pairing banner", () => {
  test("the link carries the token in the fragment, never in a query string", () => {
    assert.equal(pairingLink("http://10.0.0.2:8765", TOKEN), `http://10.0.0.2:8765/#token=${TOKEN}`);
    assert.equal(pairingLink("http://127.0.0.1:8765", "a+b/c="), "http://127.0.0.1:8765/#token=a%2Bb%2Fc%3D");
    assert.equal(pairingLink("http://127.0.0.1:8765", undefined), "http://127.0.0.1:8765/");
  });

  test("on a terminal: the link, a QR code of it, and a hint when the host is loopback only", async () => {
    const text = await pairingBanner({ url: "http://127.0.0.1:8765", host: "127.0.0.1", token: TOKEN, tokenFile: "/data/token", tty: true });
    assert.match(text, new RegExp(`open on your phone or in a browser: http://127\\.0\\.0\\.1:8765/#token=${TOKEN}`));
    assert.match(text, /[▀▄█]/, "a QR code drawn with block characters");
    assert.match(text, /--host 0\.0\.0\.0 --tls/);
    const lan = await pairingBanner({ url: "https://192.168.1.5:8765", host: "0.0.0.0", token: TOKEN, tokenFile: undefined, tty: true });
    assert.doesNotMatch(lan, /--host 0\.0\.0\.0/);
  });

  test("behind a proxy or tunnel: the link and its QR code name the public URL, and no hint about the loopback bind", async () => {
    const text = await pairingBanner({ url: "http://127.0.0.1:8765", publicUrl: "https://phone.test/acp-remote", host: "127.0.0.1", token: TOKEN, tokenFile: undefined, tty: true });
    assert.match(text, new RegExp(`open on your phone or in a browser: https://phone\\.test/acp-remote/#token=${TOKEN}`));
    assert.ok(!text.includes("127.0.0.1:8765"), "the loopback address is not offered to the phone");
    assert.doesNotMatch(text, /is this machine only/);
  });

  test("on loopback without a public URL: the hint names --public-url first, LAN + TLS as the fallback", async () => {
    const text = await pairingBanner({ url: "http://127.0.0.1:8765", host: "127.0.0.1", token: TOKEN, tokenFile: undefined, tty: true });
    assert.match(text, /--public-url \(docs\/remote-access\.md\); on a network you trust, --host 0\.0\.0\.0 --tls/);
  });

  test("not a terminal (a log): the token's file and the link's form, never the token", async () => {
    const text = await pairingBanner({ url: "http://127.0.0.1:8765", host: "127.0.0.1", token: TOKEN, tokenFile: "/data/token", tty: false });
    assert.ok(!text.includes(TOKEN));
    assert.match(text, /access token kept in \/data\/token/);
    assert.match(text, /#token=<token>/);
  });
});
