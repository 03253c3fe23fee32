// Codex (@zed-industries/codex-acp, the Responses API) doing real turns
// behind `acp-remote serve`.
import { describeAgentTurns } from "./agent-turns.ts";
import { CODEX } from "./real-agents.ts";

describeAgentTurns(CODEX, { writesThroughClientFs: false, runsCommandsThroughClientTerminal: false, loadRestoresHistory: true, onReject: "cancels the turn", offers: { modes: true, configOptions: true, slashCommands: true } });
