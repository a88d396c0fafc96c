/**
 * Waiting on a condition a test cannot be told of (a stack's state read through its API): reads
 * again and again until the value holds, and fails with the last value read when it does not in
 * time. The wait is on the condition, not on a sleep: a busy machine only makes it take longer.
 */

export interface WaitOptions {
  /** How long to keep reading, in ms. @default 30,000 */
  readonly timeoutMs?: number;
  /** Pause between reads, in ms. @default 100 */
  readonly intervalMs?: number;
}

/** Reads `read()` until `done(value)` holds and returns that value; throws after `timeoutMs`, naming the last value. */
export async function waitFor<T>(
  read: () => Promise<T> | T,
  done: (value: T) => boolean,
  options: WaitOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 100));
  }
}
