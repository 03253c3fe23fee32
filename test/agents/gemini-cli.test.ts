// Gemini CLI (@google/gemini-cli, the Gemini API at GOOGLE_GEMINI_BASE_URL)
// doing real turns behind `acp-remote serve`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { chunks } from "../helpers/scripted-model/server.ts";
import { describeAgentTurns, newSession, prompt, TURN_TIMEOUT_MS } from "./agent-turns.ts";
import { GEMINI_CLI } from "./real-agents.ts";

describeAgentTurns(
  GEMINI_CLI,
  {
    writesThroughClientFs: false,
    runsCommandsThroughClientTerminal: false,
    // Its session/load after a restart finds the session only if Gemini CLI saved it before it was stopped;
    // otherwise it fails ("No previous sessions found for this project"), the server starts a new session
    // under the same id, whose replay is the server's journal, and the model starts afresh.
    loadRestoresHistory: "when its load finds the session",
    onReject: "tells the model",
    offers: { modes: true, configOptions: false, slashCommands: true },
  },
  (served) => {
    test("regression: Gemini CLI creates a new file behind the server (offered the server's fs/*, it failed every new file: 'Error checking existing file')", { timeout: TURN_TIMEOUT_MS }, async () => {
      const { api, cwd } = served();
      const remote = await served().connect();
      const trigger = "Create the new file";
      const file = join(cwd, "brand-new.txt");
      api.script({ trigger, turns: [{ text: chunks("Creating brand-new.txt."), toolCall: GEMINI_CLI.writeTool(file, "new\n") }, { text: chunks("Created.") }] });
      const sessionId = await newSession(GEMINI_CLI, remote, cwd);
      assert.equal((await prompt(remote, sessionId, `${trigger}, please.`)).stopReason, "end_turn");
      const told = api.answered(trigger).find((r) => r.answered?.turn === 1);
      assert.doesNotMatch(JSON.stringify(told?.entries.filter((e) => e.kind === "tool_result")), /Error checking existing file/);
      assert.equal(readFileSync(file, "utf8"), "new\n");
    });
  },
);
