import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RunLimitClock } from '../../lib/runtime/timeout.ts';
import { JobTimeoutError } from '../../lib/runtime/worker-errors.ts';

// One timer serves every run limit of an invocation (issue 10: a setTimeout + clearTimeout per
// record was 4–5 % of the worker's CPU); each run must still stop at its own deadline.
describe('RunLimitClock', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires each run at its own deadline, runs started at different times', () => {
    const clock = new RunLimitClock();
    const first = clock.start('a', 100, 10_000);
    vi.advanceTimersByTime(50);
    const second = clock.start('b', 100, 10_000);
    vi.advanceTimersByTime(50);
    expect(first.reason).toBeInstanceOf(JobTimeoutError);
    expect(first.signal.aborted).toBe(true);
    expect(second.reason).toBeUndefined();
    vi.advanceTimersByTime(49);
    expect(second.reason).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(second.reason).toBeInstanceOf(JobTimeoutError);
    clock.dispose();
  });

  it('a run that started after an earlier one ended gets its full budget', () => {
    const clock = new RunLimitClock();
    const first = clock.start('a', 100, 10_000);
    vi.advanceTimersByTime(10);
    first.dispose();
    vi.advanceTimersByTime(10);
    const second = clock.start('a', 100, 10_000);
    vi.advanceTimersByTime(90);
    expect(first.reason).toBeUndefined();
    expect(second.reason).toBeUndefined();
    vi.advanceTimersByTime(10);
    expect(second.reason).toBeInstanceOf(JobTimeoutError);
    clock.dispose();
  });

  it('rejects the race of a run at its deadline, the Lambda limit when it comes first', async () => {
    const clock = new RunLimitClock();
    const limit = clock.start('a', 5_000, 200);
    const race = limit.race(new Promise(() => {}));
    vi.advanceTimersByTime(200);
    await expect(race).rejects.toMatchObject({ name: 'JobTimeoutError' });
    clock.dispose();
  });

  it('arms one timer for runs one after another, and none is left after dispose', () => {
    const setTimeoutSpy = vi.spyOn(globalThis, 'setTimeout');
    const clock = new RunLimitClock();
    for (let i = 0; i < 10; i++) clock.start('a', 1_000, 10_000).dispose();
    expect(setTimeoutSpy).toHaveBeenCalledTimes(1);
    clock.dispose();
    expect(vi.getTimerCount()).toBe(0);
    setTimeoutSpy.mockRestore();
  });
});
