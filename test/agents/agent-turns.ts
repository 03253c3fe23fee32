// The real turns every published agent is put through behind `acp-remote
// serve`, against the scripted model endpoint: what session/new offers; a
// prompt that streams text and writes a file with the agent's own tool once
// the client allows it; a shell command of its own tool; the edit refused; a
// turn cancelled mid-stream and the next one; a server restart, after which
// the session replays and a second prompt continues it. Each agent's file
// registers these with what was measured of that agent (`expected`, the
// table of docs/agents.md): whether it writes through the client's fs/* and
// runs commands through its terminal/*, what it does with a refusal, whether
// its own session/load brings the earlier turns back to its model.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { methods, type SessionNotification, type ToolCallContent } from "@agentclientprotocol/sdk";
import { ensureCachedPackages } from "../helpers/npm-cache-install.ts";
import { chunks } from "../helpers/scripted-model/server.ts";
import { pinnedPackages } from "../interop/published-agents.ts";
import { startAgentServe, type AgentServe, type Remote } from "./agent-serve.ts";
import { devDependencyEntry, type RealAgent } from "./real-agents.ts";

/** One agent's start and one real turn against the scripted endpoint, in milliseconds. */
export const TURN_TIMEOUT_MS = 120_000;
/** Waiting for one update the agent streams, in milliseconds. */
const UPDATE_TIMEOUT_MS = 60_000;

/** What was measured of the agent, and these tests hold it to. */
export interface AgentExpectations {
  /** The file is written through the client's `fs/write_text_file` (the server's host, or the editor's), not by the agent itself. */
  writesThroughClientFs: boolean;
  /** A shell command of its own tool runs through the client's `terminal/*` (the server's host, or the editor's), not by the agent itself. */
  runsCommandsThroughClientTerminal: boolean;
  /**
   * After a restart, the agent's own session/load gives its model the earlier
   * turns; "when its load finds the session": an agent that saves its
   * sessions in the background loads one only if it was saved before it was
   * stopped, and the server starts a new one otherwise (and says so in its
   * log): the model sees the earlier turn exactly when the load went through.
   */
  loadRestoresHistory: boolean | "when its load finds the session";
  /** What its session/new offers through the server: modes, config options, slash commands (available_commands_update). */
  offers: { modes: boolean; configOptions: boolean; slashCommands: boolean };
  /**
   * What it does when the edit is refused: tells the model (the refusal is
   * the tool's result, the model's answer is relayed, `end_turn`); fails the
   * tool call with its own words and ends the turn without asking the model;
   * or ends the turn `cancelled` (its only refusal is "No, provide feedback").
   */
  onReject: "tells the model" | "fails the tool call" | "cancels the turn";
}

/** Where the agent's bins are, or why it cannot run here. */
export function agentBin(agent: RealAgent): { bin: string } | { skip: string } {
  if ("devDependency" in agent.source) {
    const { pkg, bin } = agent.source.devDependency;
    return devDependencyEntry(pkg, bin) === undefined
      ? { skip: `${agent.pkg} is not installed (npm install)` }
      : { bin: "" };
  }
  // One install cache for every agent file and the interop suite.
  const cache = ensureCachedPackages("interop-agents", pinnedPackages(), (line) => process.stderr.write(`[agents] ${line}\n`));
  const missing = cache.missing.get(agent.pkg);
  return missing === undefined ? { bin: cache.bin } : { skip: `${agent.pkg} cannot be installed on this machine: ${missing}` };
}

/** The text the agent streamed in a session. */
export function textOf(updates: readonly SessionNotification[], sessionId: string): string {
  return updates
    .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk")
    .map((u) => (u.update as { content: { type: string; text?: string } }).content.text ?? "")
    .join("");
}

function messageChunks(updates: readonly SessionNotification[], sessionId: string): number {
  return updates.filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk").length;
}

/** The tool call's updates, merged as a client shows them: its last status, and every diff it carried. */
export function toolCallSeen(updates: readonly SessionNotification[], toolCallId: string): { status?: string; diffs: Array<ToolCallContent & { type: "diff" }> } {
  let status: string | undefined;
  const diffs: Array<ToolCallContent & { type: "diff" }> = [];
  for (const { update } of updates) {
    if ((update.sessionUpdate !== "tool_call" && update.sessionUpdate !== "tool_call_update") || update.toolCallId !== toolCallId) continue;
    if (update.status) status = update.status;
    for (const c of update.content ?? []) if (c.type === "diff") diffs.push(c);
  }
  return { ...(status === undefined ? {} : { status }), diffs };
}

/** A new session in `cwd`, in the mode that asks before edits (or in `modeId`). */
export async function newSession(agent: RealAgent, remote: Remote, cwd: string, modeId = agent.approvalMode): Promise<string> {
  const { sessionId } = await remote.agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
  if (modeId !== undefined) await remote.agent.request(methods.agent.session.setMode, { sessionId, modeId });
  return sessionId;
}

/** One text prompt; resolves with the turn's result. */
export function prompt(remote: Remote, sessionId: string, text: string) {
  return remote.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
}

/**
 * The shared turns of `agent`; `more` adds the agent's own tests with the
 * same running server. Skipped with the reason when the agent cannot run here.
 */
export function describeAgentTurns(agent: RealAgent, expected: AgentExpectations, more?: (context: () => AgentServe) => void): void {
  const available = agentBin(agent);
  const skip = "skip" in available ? available.skip : false;
  if (skip) process.stderr.write(`[agents] skipping ${agent.pkg}: ${skip}\n`);
  describe(`${agent.pkg} doing real turns behind acp-remote serve`, { skip }, () => {
    let served: AgentServe;
    let remote: Remote;
    const log = (): string => `\nserver log:\n${served.logs.slice(-30).join("\n")}`;

    before(async () => {
      if ("skip" in available) return;
      served = await startAgentServe(agent, available.bin);
      remote = await served.connect();
    }, { timeout: TURN_TIMEOUT_MS });
    after(async () => {
      await served?.close();
    });

    test("session/new through the server: the agent's modes, config options and slash commands", { timeout: TURN_TIMEOUT_MS }, async () => {
      const created = await remote.agent.request(methods.agent.session.new, { cwd: served.cwd, mcpServers: [] });
      const offered = { modes: (created.modes?.availableModes.length ?? 0) > 0, configOptions: (created.configOptions?.length ?? 0) > 0 };
      assert.deepEqual(offered, { modes: expected.offers.modes, configOptions: expected.offers.configOptions }, JSON.stringify(created).slice(0, 400));
      if (expected.offers.slashCommands) {
        await remote.until((u) => u.some((n) => n.sessionId === created.sessionId && n.update.sessionUpdate === "available_commands_update"), UPDATE_TIMEOUT_MS, "the slash commands");
      }
    });

    test("a prompt streams text, asks permission for the agent's own file-writing tool, the Allow writes the file and the turn ends end_turn", { timeout: TURN_TIMEOUT_MS }, async () => {
      const trigger = "Write the greeting file";
      const file = join(served.cwd, "greeting.txt");
      const content = "Hello from a scripted model.\n";
      served.api.script({ trigger, turns: [{ text: chunks("I will write greeting.txt now."), toolCall: agent.writeTool(file, content) }, { text: chunks("greeting.txt is written.") }] });
      const sessionId = await newSession(agent, remote, served.cwd);
      remote.answer = "allow";
      const asked = remote.permissions.length;
      const callsBefore = served.calls().length;

      const result = await prompt(remote, sessionId, `${trigger}, please.`);

      assert.equal(result.stopReason, "end_turn", log());
      assert.equal(readFileSync(file, "utf8"), content, "the file holds the scripted content");
      const said = textOf(remote.updates, sessionId);
      assert.ok(said.includes("I will write greeting.txt now.") && said.includes("greeting.txt is written."), `the text before and after the tool: ${said}`);
      assert.ok(messageChunks(remote.updates, sessionId) >= 4, "the text came in chunks, as the model streamed it");
      const permission = remote.permissions.slice(asked).find((p) => p.sessionId === sessionId);
      assert.ok(permission, `the agent asked permission over ACP${log()}`);
      const seen = toolCallSeen(remote.updates, permission.toolCall.toolCallId);
      assert.equal(seen.status, "completed", "the tool call's final status");
      const diffs = [...seen.diffs, ...(permission.toolCall.content ?? []).filter((c) => c.type === "diff")];
      assert.ok(diffs.some((d) => d.path === file && d.newText === content), `the tool call carries its diff: ${JSON.stringify(diffs)}`);
      // The tool's result reached the model, in the request the second turn answered.
      const second = served.api.answered(trigger).find((r) => r.answered?.turn === 1);
      assert.ok(second?.entries.some((e) => e.kind === "tool_result"), "the tool result reached the model");
      // How it wrote the file: measured at the agent's own pipe.
      const writes = served.calls().slice(callsBefore).filter((c) => c.from === "agent" && c.method === methods.client.fs.writeTextFile).length;
      assert.equal(writes > 0, expected.writesThroughClientFs, `fs/write_text_file calls: ${writes}`);
    });

    test("a shell command of the agent's own tool runs, and its output reaches the model", { timeout: TURN_TIMEOUT_MS }, async () => {
      const trigger = "Run the echo command";
      served.api.script({ trigger, turns: [{ text: chunks("Running it."), toolCall: agent.shellTool("printf 'shell-ran-%d\\n' 42") }, { text: chunks("The command ran.") }] });
      const sessionId = await newSession(agent, remote, served.cwd, agent.shellMode ?? agent.approvalMode);
      remote.answer = "allow";
      const callsBefore = served.calls().length;
      const result = await prompt(remote, sessionId, `${trigger}, please.`);
      assert.equal(result.stopReason, "end_turn", log());
      const told = served.api.answered(trigger).find((r) => r.answered?.turn === 1);
      assert.ok(told?.entries.some((e) => e.kind === "tool_result" && e.text.includes("shell-ran-42")), `the command's output reached the model: ${JSON.stringify(told?.entries.filter((e) => e.kind === "tool_result"))}${log()}`);
      // The output, not the command (the model sees that anyway), proves it ran: printf made "shell-ran-42".
      // Where it ran: measured at the agent's own pipe.
      const terminals = served.calls().slice(callsBefore).filter((c) => c.from === "agent" && c.method === methods.client.terminal.create).length;
      assert.equal(terminals > 0, expected.runsCommandsThroughClientTerminal, `terminal/create calls: ${terminals}`);
    });

    test("Reject: the file is not written and the agent says so", { timeout: TURN_TIMEOUT_MS }, async () => {
      const trigger = "Write the refused file";
      const file = join(served.cwd, "refused.txt");
      const answer = "The edit was rejected, so refused.txt was not written.";
      served.api.script({ trigger, turns: [{ text: chunks("Writing refused.txt."), toolCall: agent.writeTool(file, "not to be written\n") }, { text: chunks(answer) }] });
      const sessionId = await newSession(agent, remote, served.cwd);
      remote.answer = "reject";
      const asked = remote.permissions.length;
      let stopReason: string;
      try {
        stopReason = (await prompt(remote, sessionId, `${trigger}, please.`)).stopReason;
      } finally {
        remote.answer = "allow";
      }
      assert.equal(existsSync(file), false, "the file is not written");
      const permission = remote.permissions.slice(asked).find((p) => p.sessionId === sessionId);
      assert.ok(permission, "the agent asked permission");
      const seen = toolCallSeen(remote.updates, permission.toolCall.toolCallId);
      assert.notEqual(seen.status, "completed", "the tool call did not complete");
      const told = served.api.answered(trigger).find((r) => r.answered?.turn === 1);
      switch (expected.onReject) {
        case "tells the model":
          assert.equal(stopReason, "end_turn", log());
          assert.ok(told?.entries.some((e) => e.kind === "tool_result"), `the refusal reached the model as the tool's result${log()}`);
          assert.ok(textOf(remote.updates, sessionId).includes(answer), `the model's answer is relayed: ${textOf(remote.updates, sessionId)}`);
          break;
        case "fails the tool call": {
          assert.equal(stopReason, "end_turn", log());
          assert.equal(seen.status, "failed");
          const said = remote.updates
            .filter((u) => u.update.sessionUpdate === "tool_call_update" && u.update.toolCallId === permission.toolCall.toolCallId)
            .flatMap((u) => (u.update as { content?: Array<{ type: string; content?: { text?: string } }> }).content ?? [])
            .map((c) => c.content?.text ?? "")
            .join("");
          assert.ok(said.length > 0, "the failed tool call says why");
          assert.equal(told, undefined, "the model is not asked again");
          break;
        }
        case "cancels the turn":
          assert.equal(stopReason, "cancelled", log());
          assert.equal(told, undefined, "the model is not asked again");
          break;
      }
    });

    test("cancel mid-stream: the turn ends cancelled, and the agent answers the next prompt", { timeout: TURN_TIMEOUT_MS }, async () => {
      const trigger = "Tell a long story";
      served.api.script({ trigger, turns: [{ text: chunks("Once upon a time, far away"), hold: true }] });
      const sessionId = await newSession(agent, remote, served.cwd);
      const held = served.api.held(UPDATE_TIMEOUT_MS);
      const turn = prompt(remote, sessionId, `${trigger}, please.`);
      await held;
      await remote.until((u) => textOf(u, sessionId).includes("Once upon"), UPDATE_TIMEOUT_MS, "the streamed text");
      await remote.agent.notify(methods.agent.session.cancel, { sessionId });
      assert.equal((await turn).stopReason, "cancelled", log());

      const next = "Say you are back";
      served.api.script({ trigger: next, turns: [{ text: chunks("I am back after the cancel.") }] });
      const again = await prompt(remote, sessionId, `${next}.`);
      assert.equal(again.stopReason, "end_turn", log());
      assert.ok(textOf(remote.updates, sessionId).includes("I am back after the cancel."));
    });

    test("the server restarted: the session replays, and a second prompt continues it", { timeout: 2 * TURN_TIMEOUT_MS }, async () => {
      const first = "Remember the word pelican";
      served.api.script({ trigger: first, turns: [{ text: chunks("I will remember pelican.") }] });
      const sessionId = await newSession(agent, remote, served.cwd);
      assert.equal((await prompt(remote, sessionId, `${first}.`)).stopReason, "end_turn", log());

      await served.restart();
      remote = await served.connect();
      await remote.agent.request(methods.agent.session.load, { sessionId, cwd: served.cwd, mcpServers: [] });
      // The replay (the server's journal) brings back the first turn.
      await remote.until((u) => textOf(u, sessionId).includes("I will remember pelican."), UPDATE_TIMEOUT_MS, "the replayed first turn");

      const second = "Which word was it";
      served.api.script({ trigger: second, turns: [{ text: chunks("The word was pelican.") }] });
      const result = await prompt(remote, sessionId, `${second}?`);
      assert.equal(result.stopReason, "end_turn", log());
      assert.ok(textOf(remote.updates, sessionId).includes("The word was pelican."));
      // Any request of the second prompt: an agent may ask its model more after the turn (a title, a suggestion) with less of the conversation.
      const requests = served.api.answered(second);
      assert.ok(requests.length > 0, `the second prompt reached the model${log()}`);
      const earlier = requests.some((r) => r.entries.some((e) => e.kind === "user" && e.text.includes(first)));
      const loaded = !served.logs.some((line) => line.includes(`could not load session ${sessionId}`));
      const restores = expected.loadRestoresHistory === "when its load finds the session" ? loaded : expected.loadRestoresHistory;
      assert.equal(earlier, restores, `the model sees the earlier turn: ${JSON.stringify(requests.map((r) => r.entries)).slice(0, 600)}${log()}`);
    });

    more?.(() => served);
  });
}
