// `--agent NAME=COMMAND`: word splitting as a POSIX shell does it (quotes and
// backslashes, no expansion), one row per rule.
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { CommandLineError, formatCommandLine, parseAgentFlag, parseCommandLine } from "../../sidecar/bridge/command-line.ts";

const splits: [row: string, line: string, words: string[]][] = [
  ["blanks separate words", "gemini --experimental-acp", ["gemini", "--experimental-acp"]],
  ["runs of spaces and tabs count as one", "  a \t b  ", ["a", "b"]],
  ["an empty line has no words", "   ", []],
  ["single quotes keep everything literal", `echo 'a  b "c" \\d $HOME'`, ["echo", `a  b "c" \\d $HOME`]],
  ["double quotes keep blanks", `run "two words"`, ["run", "two words"]],
  ["in double quotes a backslash escapes \" \\ $ and `", `x "a\\"b\\\\c\\$d\\\`e"`, ["x", 'a"b\\c$d`e']],
  ["in double quotes a backslash before another character stays", `x "a\\nb"`, ["x", "a\\nb"]],
  ["outside quotes a backslash makes the next character literal", "a\\ b c\\'d", ["a b", "c'd"]],
  ["a backslash-newline joins lines", "a\\\nb", ["ab"]],
  ["quotes join with adjacent text into one word", `--flag='x y'"z"w`, ["--flag=x yzw"]],
  ['"" is an empty argument', `cmd "" ''`, ["cmd", "", ""]],
  ["no expansion of variables, globs or ~", "ls $HOME *.ts ~", ["ls", "$HOME", "*.ts", "~"]],
  ["UTF-8 passes through", "agent --name 'café ☕'", ["agent", "--name", "café ☕"]],
];

const splitErrors: [row: string, line: string, message: RegExp][] = [
  ["an unterminated single quote", "echo 'abc", /unterminated single quote at column 6/],
  ["an unterminated double quote", 'echo "abc', /unterminated double quote at column 6/],
  ["a trailing backslash", "echo abc\\", /ends with a backslash/],
];

describe("parseCommandLine", () => {
  for (const [row, line, words] of splits) {
    test(row, () => assert.deepEqual(parseCommandLine(line), words));
  }
  for (const [row, line, message] of splitErrors) {
    test(`${row} is an error`, () => assert.throws(() => parseCommandLine(line), (e: unknown) => e instanceof CommandLineError && message.test(e.message)));
  }
  test("formatCommandLine gives back a line that splits into the same words", () => {
    for (const [, line] of splits) {
      const words = parseCommandLine(line);
      assert.deepEqual(parseCommandLine(formatCommandLine(words)), words);
    }
  });
});

describe("parseAgentFlag", () => {
  test("NAME=COMMAND with arguments", () => {
    assert.deepEqual(parseAgentFlag("claude=npx -y @agentclientprotocol/claude-agent-acp"), {
      name: "claude",
      command: "npx",
      args: ["-y", "@agentclientprotocol/claude-agent-acp"],
    });
  });
  test("the command may contain '='", () => {
    assert.deepEqual(parseAgentFlag("g=gemini --mode=acp"), { name: "g", command: "gemini", args: ["--mode=acp"] });
  });
  const errors: [row: string, value: string, message: string][] = [
    ["no '='", "claude", '--agent expects NAME=COMMAND, got "claude"'],
    ["an empty name", "=gemini", '--agent "=gemini": the agent name is empty'],
    ["a name that cannot travel in a URL", "my agent=gemini", '--agent "my agent=gemini": the agent name may hold only letters, digits, ".", "_" and "-", and starts with a letter or digit'],
    ["an empty command", "claude=", "--agent claude: the command is empty"],
    ["a command of blanks", "claude=   ", "--agent claude: the command is empty"],
    ["an empty quoted command", "claude=''", "--agent claude: the command is empty"],
    ["bad quoting", "claude=run 'x", "--agent claude: unterminated single quote at column 5"],
  ];
  for (const [row, value, message] of errors) {
    test(`${row} is an error`, () => assert.throws(() => parseAgentFlag(value), (e: unknown) => e instanceof CommandLineError && e.message === message));
  }
});
