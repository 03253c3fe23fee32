// The flags `npm test` gives node --test, shared with the test that checks a
// failing file ends in its timeout instead of hanging the run.
//
// --test-timeout bounds every test and hook (an `after` that waits for a server
// that never closes fails at the bound instead of waiting for ever), and
// --test-force-exit ends a file's process once its tests are done, even when
// a failed test left a socket, a server or a child's pipe open: a failing test
// costs its timeout, not the whole run.

/** Longest a single test or hook may take, in milliseconds. */
export const DEFAULT_TEST_TIMEOUT_MS = 120_000;

export const NODE_TEST_FLAGS = ["--test", "--test-concurrency=2", `--test-timeout=${DEFAULT_TEST_TIMEOUT_MS}`, "--test-force-exit"];
