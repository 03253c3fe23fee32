// Runs the test suites in order: unit and integration (node:test, real sockets
// and processes), then the extension suite in a real VS Code (code-server),
// then the smoke of the .vsix as a user installs it (run.ts --installed).
// Extra arguments are passed to node --test (e.g. a file or --test-name-pattern).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { NODE_TEST_FLAGS } from "./test-flags.mjs";

const args = process.argv.slice(2);
const files = args.filter((a) => !a.startsWith("-"));
const flags = args.filter((a) => a.startsWith("-"));
const run = (cmd, argv) => spawnSync(cmd, argv, { stdio: "inherit" }).status ?? 1;

let status = run(process.execPath, [
  ...NODE_TEST_FLAGS,
  ...flags,
  ...(files.length > 0 ? files : ["test/**/*.test.ts"]),
]);
if (files.length === 0 && !process.env.ACP_REMOTE_SKIP_VSCODE && existsSync("test/vscode/run.ts")) {
  status = run(process.execPath, ["test/vscode/run.ts"]) || status;
  status = run(process.execPath, ["test/vscode/run.ts", "--installed"]) || status;
}
process.exit(status);
