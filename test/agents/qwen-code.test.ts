// Qwen Code (@qwen-code/qwen-code, Chat Completions) doing real turns behind
// `acp-remote serve`.
import { describeAgentTurns } from "./agent-turns.ts";
import { QWEN_CODE } from "./real-agents.ts";

describeAgentTurns(QWEN_CODE, { writesThroughClientFs: true, runsCommandsThroughClientTerminal: false, loadRestoresHistory: true, onReject: "fails the tool call", offers: { modes: true, configOptions: true, slashCommands: true } });
