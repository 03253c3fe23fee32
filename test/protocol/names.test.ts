// One name for a session and for a connection, as the editor's tree and tabs
// and the phone's pages show them (protocol/names.ts).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { connectionName, sessionName, shortSessionId } from "../../protocol/names.ts";

describe("session and connection names", () => {
  test("regression: the tree named a session by its id's head and the tab by its tail; both now take the same end of the id", () => {
    const sessionId = "b9be56c0-0c3a-4e1f-9d2b-6f1e2d6baca6";
    assert.equal(shortSessionId(sessionId), "6baca6");
    assert.equal(sessionName({ sessionId, agent: "claude" }), "claude · 6baca6");
  });

  test("ids that agents number in order stay apart: their end differs, not their start", () => {
    assert.notEqual(shortSessionId("session-1"), shortSessionId("session-2"));
    assert.notEqual(shortSessionId("demo-0a1b2c3d-0000-4000-8000-000000000001"), shortSessionId("demo-0a1b2c3d-0000-4000-8000-000000000002"));
    assert.equal(shortSessionId("s1"), "s1", "a short id is whole");
  });

  test("a title the agent gave names the session; an empty or blank one does not", () => {
    assert.equal(sessionName({ sessionId: "fixture-123456", agent: "fixture", title: "Fix the login form" }), "Fix the login form");
    assert.equal(sessionName({ sessionId: "fixture-123456", agent: "fixture", title: "" }), "fixture · 123456");
    assert.equal(sessionName({ sessionId: "fixture-123456", agent: "fixture", title: "   " }), "fixture · 123456");
    assert.equal(sessionName({ sessionId: "fixture-123456", agent: "fixture", title: null }), "fixture · 123456");
  });

  test("a connection with a paired device's token is named by the device; with an access token, by the person", () => {
    const devices = [{ deviceId: "d1", label: "Pixel 8" }];
    assert.equal(connectionName({ principal: "owner", deviceId: "d1" }, devices), "Pixel 8");
    assert.equal(connectionName({ principal: "owner" }, devices), "owner");
    assert.equal(connectionName({ principal: "alice" }, devices), "alice");
    // A device revoked meanwhile: the person its token stood for.
    assert.equal(connectionName({ principal: "owner", deviceId: "gone" }, devices), "owner");
  });
});
