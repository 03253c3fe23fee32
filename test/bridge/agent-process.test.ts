// AgentProcess against the real fixture agent (test/fixtures/agent.ts), spawned
// as a child process: initialize, prompt turns, requests in both directions,
// ACP cancellation, crashes and the restart policy.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { InitializeResponse, PromptResponse, SessionNotification } from "@agentclientprotocol/sdk";
import { AgentProcess, RpcFailure, type AgentPeerHandler, type AgentProcessOptions } from "../../sidecar/bridge/agent-process.ts";
import type { AgentSpec } from "../../protocol/agent-spec.ts";
import { Acp } from "../../protocol/acp.ts";
import { ErrorCode } from "../../protocol/jsonrpc.ts";

const FIXTURE = fileURLToPath(new URL("../fixtures/agent.ts", import.meta.url));

function fixtureSpec(env: Record<string, string> = {}): AgentSpec {
  return { name: "fixture", command: process.execPath, args: [FIXTURE], env };
}

/** A handler that records what the agent sends; requests go to `onRequest`. */
class Recorder implements AgentPeerHandler {
  readonly notifications: { method: string; params: unknown }[] = [];
  readonly requests: { method: string; params: unknown }[] = [];
  onRequest: (method: string, params: unknown, signal: AbortSignal) => Promise<unknown> = async (method) => {
    throw RpcFailure.methodNotFound(method);
  };
  private readonly listeners = new Set<() => void>();

  request(method: string, params: unknown, signal: AbortSignal): Promise<unknown> {
    this.requests.push({ method, params });
    return this.onRequest(method, params, signal);
  }

  notification(method: string, params: unknown): void {
    this.notifications.push({ method, params });
    for (const listener of [...this.listeners]) listener();
  }

  /** Texts of the agent_message_chunk updates received so far. */
  messages(): string[] {
    return this.updates()
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => ("content" in u && u.content.type === "text" ? u.content.text : ""));
  }

  updates(): SessionNotification["update"][] {
    return this.notifications.filter((n) => n.method === Acp.client.session.update).map((n) => (n.params as SessionNotification).update);
  }

  /** Resolves once `predicate` holds over what was received. */
  until(predicate: () => boolean): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = (): void => {
        if (predicate()) {
          this.listeners.delete(check);
          resolve();
        }
      };
      this.listeners.add(check);
    });
  }
}

const running = new Set<AgentProcess>();
after(async () => {
  await Promise.all([...running].map((agent) => agent.stop()));
});

function startAgent(handler: AgentPeerHandler, options: AgentProcessOptions = {}, spec: AgentSpec = fixtureSpec()): AgentProcess {
  const logs: string[] = [];
  const agent = new AgentProcess(spec, handler, { log: (line) => logs.push(line), ...options });
  running.add(agent);
  return agent;
}

async function newSession(agent: AgentProcess): Promise<string> {
  const result = (await agent.request(Acp.agent.session.new, { cwd: process.cwd(), mcpServers: [] })) as { sessionId: string };
  return result.sessionId;
}

/** A started agent of `handler`'s with one new session. */
async function agentWithSession(handler: AgentPeerHandler): Promise<{ agent: AgentProcess; sessionId: string }> {
  const agent = startAgent(handler);
  await agent.start();
  return { agent, sessionId: await newSession(agent) };
}

function prompt(agent: AgentProcess, sessionId: string, script: string, signal?: AbortSignal): Promise<PromptResponse> {
  return agent.request(Acp.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: script }] }, signal) as Promise<PromptResponse>;
}

describe("AgentProcess with the fixture agent", () => {
  test("start: spawns the agent, sends initialize with the client capabilities, and runs as generation 1", async () => {
    const agent = startAgent(new Recorder());
    const states: string[] = [];
    agent.onStateChange((state) => states.push(state));
    await agent.start();
    const init = agent.initializeResult as InitializeResponse;
    assert.equal(init.agentInfo?.name, "fixture-agent");
    assert.equal(init.agentCapabilities?.loadSession, true);
    assert.equal(agent.state, "running");
    assert.deepEqual(states, ["running"]);
    assert.equal(agent.generation, 1);
    const info = agent.info();
    assert.equal(info.name, "fixture");
    assert.equal(info.state, "running");
    assert.equal(typeof info.pid, "number");
    assert.equal(info.restarts, 0);
    assert.deepEqual(await agent.ready(), init);
    await agent.stop();
    assert.equal(agent.state, "stopped");
  });

  test("a request to an agent not started yet starts it and waits for initialize", async () => {
    const agent = startAgent(new Recorder());
    assert.equal(agent.state, "starting");
    assert.equal(agent.generation, 0);
    assert.equal(typeof (await newSession(agent)), "string");
    assert.equal(agent.generation, 1);
    await agent.stop();
  });

  test("a prompt turn: the agent's session/update notifications reach the handler in order, then the response", async () => {
    const recorder = new Recorder();
    const { agent, sessionId } = await agentWithSession(recorder);
    const response = await prompt(agent, sessionId, "think pondering\necho hello\nplan one | two\nusage");
    assert.equal(response.stopReason, "end_turn");
    assert.deepEqual((response as { usage?: unknown }).usage, { inputTokens: 10, outputTokens: 20, totalTokens: 30 });
    assert.deepEqual(
      recorder.updates().map((u) => u.sessionUpdate),
      ["agent_thought_chunk", "agent_message_chunk", "plan"],
    );
    assert.deepEqual(recorder.messages(), ["hello"]);
    assert.equal((recorder.notifications[0]!.params as SessionNotification).sessionId, sessionId);
    await agent.stop();
  });

  test("an agent's error answer becomes RpcFailure with the agent's code and message", async () => {
    const { agent, sessionId } = await agentWithSession(new Recorder());
    await assert.rejects(prompt(agent, sessionId, "error -32042 no such thing"), (error: unknown) => {
      assert.ok(error instanceof RpcFailure);
      assert.equal(error.code, -32042);
      assert.equal(error.message, "no such thing");
      return true;
    });
    await agent.stop();
  });

  test("a request from the agent (session/request_permission) is answered by the handler", async () => {
    const recorder = new Recorder();
    recorder.onRequest = async () => ({ outcome: { outcome: "selected", optionId: "allow_always" } });
    const { agent, sessionId } = await agentWithSession(recorder);
    const response = await prompt(agent, sessionId, "permission Edit README.md");
    assert.equal(response.stopReason, "end_turn");
    assert.equal(recorder.requests[0]!.method, Acp.client.session.requestPermission);
    assert.equal((recorder.requests[0]!.params as { toolCall: { title: string } }).toolCall.title, "Edit README.md");
    assert.deepEqual(recorder.messages(), ["outcome: selected allow_always"]);
    await agent.stop();
  });

  test("a handler's RpcFailure reaches the agent as that JSON-RPC error (-32601 for a method it does not serve)", async () => {
    const recorder = new Recorder();
    const { agent, sessionId } = await agentWithSession(recorder);
    await prompt(agent, sessionId, 'request x/unknown {"a":1}');
    assert.deepEqual(recorder.requests, [{ method: "x/unknown", params: { a: 1 } }]);
    assert.deepEqual(recorder.messages(), ["error: -32601 method not found: x/unknown"]);
    await agent.stop();
  });

  test("aborting a request's signal sends $/cancel_request: the agent ends the turn with stopReason cancelled", async () => {
    const recorder = new Recorder();
    const { agent, sessionId } = await agentWithSession(recorder);
    const controller = new AbortController();
    const turn = prompt(agent, sessionId, "echo started\nslow 600000", controller.signal);
    await recorder.until(() => recorder.messages().includes("started"));
    controller.abort();
    assert.equal((await turn).stopReason, "cancelled");
    await agent.stop();
  });

  test("an incoming $/cancel_request aborts the handler's signal", async () => {
    const recorder = new Recorder();
    let aborted = false;
    recorder.onRequest = (_method, _params, signal) =>
      new Promise((resolve) => {
        signal.addEventListener("abort", () => {
          aborted = true;
          resolve({ outcome: { outcome: "cancelled" } });
        });
      });
    const { agent, sessionId } = await agentWithSession(recorder);
    const turn = prompt(agent, sessionId, "permission Run tests");
    await recorder.until(() => recorder.updates().some((u) => u.sessionUpdate === "tool_call"));
    while (recorder.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    // session/cancel makes the SDK agent cancel its pending permission request with $/cancel_request.
    agent.notify(Acp.agent.session.cancel, { sessionId });
    assert.equal((await turn).stopReason, "cancelled");
    assert.equal(aborted, true);
    assert.deepEqual(recorder.messages(), ["outcome: cancelled"]);
    await agent.stop();
  });

  test("the agent exiting mid-prompt fails the pending request with RpcFailure -32603, then it is restarted as a new generation", async () => {
    const recorder = new Recorder();
    const agent = startAgent(recorder, { restartMinMs: 10 });
    await agent.start();
    const states: string[] = [];
    agent.onStateChange((state) => states.push(state));
    const restarted = new Promise<number>((resolve) => agent.onRestart(resolve));
    const sessionId = await newSession(agent);
    const firstPid = agent.info().pid;
    await assert.rejects(prompt(agent, sessionId, "exit 3"), (error: unknown) => {
      assert.ok(error instanceof RpcFailure);
      assert.equal(error.code, ErrorCode.InternalError);
      assert.match(error.message, /^agent fixture exited with code 3/);
      return true;
    });
    // A request made while the agent restarts waits for the new process.
    const during = newSession(agent);
    assert.equal(await restarted, 2);
    assert.equal(typeof (await during), "string");
    assert.deepEqual(states, ["restarting", "running"]);
    assert.equal(agent.generation, 2);
    assert.equal(agent.state, "running");
    assert.equal(agent.info().restarts, 1);
    assert.notEqual(agent.info().pid, firstPid);
    assert.match(agent.info().lastError ?? "", /exited with code 3/);
    // The new process knows none of the old sessions but serves new ones.
    await assert.rejects(prompt(agent, sessionId, "echo hi"), RpcFailure);
    const fresh = await newSession(agent);
    assert.equal((await prompt(agent, fresh, "echo again")).stopReason, "end_turn");
    await agent.stop();
  });

  test("bounded restarts: an agent that keeps crashing ends in failed with lastError", async () => {
    const agent = startAgent(new Recorder(), { restartMinMs: 5, restartMaxMs: 20, maxRestarts: 2 }, fixtureSpec({ FIXTURE_AGENT_EXIT_ON_START: "7" }));
    const states: string[] = [];
    agent.onStateChange((state) => states.push(state));
    await assert.rejects(agent.start(), (error: unknown) => {
      assert.ok(error instanceof RpcFailure);
      assert.match(error.message, /agent fixture exited with code 7.*gave up after 2 restarts/);
      return true;
    });
    assert.equal(agent.state, "failed");
    assert.equal(agent.generation, 3);
    assert.equal(agent.info().restarts, 2);
    assert.match(agent.info().lastError ?? "", /exited with code 7/);
    assert.deepEqual(states, ["restarting", "failed"]);
    await assert.rejects(agent.request(Acp.agent.session.new, { cwd: "/", mcpServers: [] }), RpcFailure);
    await assert.rejects(agent.ready(), RpcFailure);
  });

  test("an initialize error counts as a crash; lastError says initialize failed", async () => {
    const agent = startAgent(new Recorder(), { restartMinMs: 5, maxRestarts: 1 }, fixtureSpec({ FIXTURE_AGENT_INIT_ERROR: "1" }));
    await assert.rejects(agent.start(), /initialize failed: fixture initialize error/);
    assert.equal(agent.state, "failed");
  });

  test("an agent that never answers initialize is killed after the timeout and counts as a crash", async () => {
    const agent = startAgent(new Recorder(), { initializeTimeoutMs: 300, restartMinMs: 5, maxRestarts: 0 }, fixtureSpec({ FIXTURE_AGENT_SILENT: "1" }));
    await assert.rejects(agent.start(), /agent fixture: initialize failed: did not answer initialize within 300 ms; gave up after 0 restarts/);
    assert.equal(agent.state, "failed");
  });

  test("a command that does not exist is failed at once, with a message naming the agent and the command", async () => {
    const agent = startAgent(new Recorder(), {}, { name: "ghost", command: "/nonexistent/acp-agent-xyz", args: [] });
    await assert.rejects(agent.start(), (error: unknown) => {
      assert.ok(error instanceof RpcFailure);
      assert.equal(error.message, 'agent ghost: cannot start "/nonexistent/acp-agent-xyz": command not found');
      return true;
    });
    assert.equal(agent.state, "failed");
    assert.equal(agent.info().restarts, 0);
    assert.equal(agent.info().lastError, 'agent ghost: cannot start "/nonexistent/acp-agent-xyz": command not found');
  });

  test("a line that is not JSON is logged and skipped; the connection goes on", async () => {
    const logs: string[] = [];
    const agent = startAgent(new Recorder(), { log: (line) => logs.push(line) }, fixtureSpec({ FIXTURE_AGENT_GARBAGE: "1" }));
    await agent.start();
    assert.equal(agent.state, "running");
    assert.ok(logs.some((line) => line.includes("not JSON")), logs.join("\n"));
    assert.ok(logs.some((line) => line.startsWith("[fixture] fixture-agent")), "stderr lines are logged");
    await agent.stop();
  });

  test("stop: ends the process group, fails requests in flight, and the agent stays stopped", async () => {
    const recorder = new Recorder();
    const agent = startAgent(recorder);
    await agent.start();
    const pid = agent.info().pid!;
    const sessionId = await newSession(agent);
    const turn = prompt(agent, sessionId, "echo started\nslow 600000");
    await recorder.until(() => recorder.messages().includes("started"));
    await agent.stop();
    await assert.rejects(turn, RpcFailure);
    assert.equal(agent.state, "stopped");
    assert.throws(() => process.kill(pid, 0), /ESRCH/);
    await assert.rejects(agent.request(Acp.agent.session.new, { cwd: "/", mcpServers: [] }), /agent fixture is stopped/);
  });
});

describe("the order of what one read brings (an agent that writes several messages at once)", () => {
  const BURST = fileURLToPath(new URL("./fixtures/burst-agent.ts", import.meta.url));
  const burstSpec: AgentSpec = { name: "burst", command: process.execPath, args: [BURST], env: {} };

  test("its request, then an update: the request reaches the handler first", async () => {
    const events: string[] = [];
    const recorder = new Recorder();
    recorder.onRequest = async (method) => {
      events.push(`request ${method}`);
      return {};
    };
    const handler: AgentPeerHandler = {
      request: (method, params, signal) => recorder.request(method, params, signal),
      notification: (method) => void events.push(method),
    };
    const agent = startAgent(handler, {}, burstSpec);
    await agent.start();
    const sessionId = await newSession(agent);
    await prompt(agent, sessionId, "request-then-update");
    assert.deepEqual(events, ["request x/ask", Acp.client.session.update]);
  });

  test("the answer to our request, then an update: the code awaiting the answer runs first", async () => {
    const events: string[] = [];
    let told: () => void = () => undefined;
    const updated = new Promise<void>((resolve) => (told = resolve));
    const handler: AgentPeerHandler = {
      request: async () => ({}),
      notification: (method) => {
        events.push(method);
        told();
      },
    };
    const agent = startAgent(handler, {}, burstSpec);
    await agent.start();
    const sessionId = await newSession(agent);
    await prompt(agent, sessionId, "answer-then-update").then(() => events.push("answered"));
    await updated;
    assert.deepEqual(events, ["answered", Acp.client.session.update]);
  });
});

test("stop() of an agent that ignores stdin EOF and SIGTERM: SIGKILL after the grace period, stop() bounded, the process gone", async () => {
  const fixture = fileURLToPath(new URL("fixtures/stubborn-agent.ts", import.meta.url));
  const logs: string[] = [];
  const stopGraceMs = 300;
  const stopKillWaitMs = 1_000;
  const agent = new AgentProcess({ name: "stubborn", command: process.execPath, args: [fixture] }, new Recorder(), {
    log: (line) => logs.push(line),
    stopGraceMs,
    stopKillWaitMs,
  });
  running.add(agent);
  await agent.start();
  const pid = agent.info().pid!;
  const started = performance.now();
  await agent.stop();
  const tookMs = performance.now() - started;
  assert.ok(tookMs < stopGraceMs + stopKillWaitMs + 500, `stop() took ${Math.round(tookMs)} ms`);
  assert.ok(tookMs >= stopGraceMs - 50, `SIGTERM was ignored, so stop() waited the grace period (took ${Math.round(tookMs)} ms)`);
  assert.equal(agent.state, "stopped");
  assert.throws(() => process.kill(pid, 0), /ESRCH/, "the process is gone");
  assert.ok(logs.some((line) => line.includes("SIGTERM ignored")), logs.join("\n"));
});
