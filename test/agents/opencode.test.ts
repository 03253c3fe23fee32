// OpenCode (opencode-ai, an OpenAI-compatible provider: Chat Completions)
// doing real turns behind `acp-remote serve`.
import { describeAgentTurns } from "./agent-turns.ts";
import { OPENCODE } from "./real-agents.ts";

describeAgentTurns(OPENCODE, { writesThroughClientFs: true, runsCommandsThroughClientTerminal: false, loadRestoresHistory: true, onReject: "fails the tool call", offers: { modes: false, configOptions: true, slashCommands: true } });
