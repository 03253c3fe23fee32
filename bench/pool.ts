// Measured work with a fixed number of tasks in flight: each of `concurrency`
// workers takes the next index as soon as its task ends, so the load stays
// level, and no worker starts a task after the deadline.

/** Runs `task(i)` for i in [0, count) with `concurrency` in flight, until `deadline` (a performance.now() time); returns how many ran. */
export async function pool(count: number, concurrency: number, deadline: number, task: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (next < count && performance.now() < deadline) {
      const i = next++;
      await task(i);
      done++;
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, worker));
  return done;
}
