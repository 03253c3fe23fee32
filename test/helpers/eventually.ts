// Waiting on a state that comes by itself (a socket closed, a count reached)
// when there is no event to wait on: polled, with a deadline that names what
// was awaited, so a test that fails says what never came instead of hanging.

/** How often `eventually` polls, in milliseconds. */
export const DEFAULT_POLL_MS = 20;
/** How long `eventually` waits by default, in milliseconds. */
export const DEFAULT_EVENTUALLY_TIMEOUT_MS = 30_000;

/** Resolves once `check()` holds; rejects after `timeoutMs`, naming `what`. */
export async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = DEFAULT_EVENTUALLY_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, DEFAULT_POLL_MS));
  }
}
