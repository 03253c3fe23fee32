// The sidecar's log in the editor: under `--control stdio` each stderr line
// carries its level (protocol/log-line.ts), and the extension writes it into
// its log at that level (extension/sidecar-log.ts) instead of marking every
// line [error]. The mapping alone, then a real sidecar started as the editor
// starts it, its stderr read by the extension's own forwarder.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { formatLogLine, LOG_LEVELS, parseLogLine, type LogLevel } from "../../protocol/log-line.ts";
import { forwardSidecarStderr, logSidecarLine, type LevelledLog } from "../../extension/sidecar-log.ts";
import { spawnControlled, type ControlChild } from "../helpers/control-child.ts";
import { eventually } from "../helpers/eventually.ts";

/** A log that keeps what it was given, as the editor's LogOutputChannel would show it. */
function recordingLog(): LevelledLog & { lines: Array<{ level: LogLevel; text: string }> } {
  const lines: Array<{ level: LogLevel; text: string }> = [];
  const at = (level: LogLevel) => (text: string): void => void lines.push({ level, text });
  return { lines, trace: at("trace"), debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

const sidecars: ControlChild[] = [];
const folders: string[] = [];
after(async () => {
  for (const s of sidecars) await s.stop();
  for (const f of folders) rmSync(f, { recursive: true, force: true });
});

describe("the sidecar's log lines at their own levels", () => {
  it("each level survives the trip: formatted by the sidecar, written at that level by the editor", () => {
    for (const level of LOG_LEVELS) {
      const log = recordingLog();
      logSidecarLine(log, formatLogLine(level, `journal: something at ${level}`));
      assert.deepEqual(log.lines, [{ level, text: `journal: something at ${level}` }]);
    }
  });

  it("a multi-line text keeps its level on every line", () => {
    const log = recordingLog();
    for (const line of formatLogLine("warn", "first\nsecond").split("\n")) logSidecarLine(log, line);
    assert.deepEqual(log.lines, [
      { level: "warn", text: "first" },
      { level: "warn", text: "second" },
    ]);
  });

  it("Node's own warning (and its hint line) is a warning; any other line without a level (a crash) is an error", () => {
    assert.deepEqual(parseLogLine("(node:4242) ExperimentalWarning: SQLite is an experimental feature"), { level: "warn", text: "(node:4242) ExperimentalWarning: SQLite is an experimental feature" });
    assert.equal(parseLogLine("(Use `node --trace-warnings ...` to show where the warning was created)").level, "warn");
    assert.deepEqual(parseLogLine("TypeError: x is not a function"), { level: "error", text: "TypeError: x is not a function" });
    assert.equal(parseLogLine("[notice] not one of ours").level, "error");
  });

  it("the sidecar under the editor: every line it printed reached the editor's log as [error]; now listening is info, an open data folder warn, an agent that cannot start error", async () => {
    // A data folder others may read: the sidecar tightens it and says so (a warning).
    const folder = mkdtempSync(join(tmpdir(), "acp-log-levels-"));
    folders.push(folder);
    const dataDir = join(folder, "data");
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    const log = recordingLog();
    const sidecar = await spawnControlled({
      token: "log-levels-test-token-0123456789",
      dataDir,
      serve: { agents: [{ name: "broken", command: "/no/such/agent-program", args: [] }] },
      onStderr: (stderr) => forwardSidecarStderr(stderr, log),
    });
    sidecars.push(sidecar);
    assert.ok("url" in sidecar.started, `the listener did not start: ${JSON.stringify(sidecar.started)}`);
    const find = (pattern: RegExp) => log.lines.find((l) => pattern.test(l.text));
    await eventually("the listening line, the data folder's warning and the agent's failure in the log", () =>
      [/listening on http/, /data folder .* was open to other users/, /broken.*\/no\/such\/agent-program/].every((p) => find(p) !== undefined),
    );
    assert.equal(find(/listening on http/)?.level, "info", JSON.stringify(log.lines, null, 1));
    assert.equal(find(/data folder .* was open to other users/)?.level, "warn");
    assert.equal(find(/broken.*\/no\/such\/agent-program/)?.level, "error");
    assert.ok(log.lines.some((l) => l.level === "info"));
  });
});
