/**
 * The time source of the local Scheduler emulator: what "now" is and how to wait for an instant.
 * The runtime uses the system clock; tests inject a {@link ManualClock} and move it forward, so a
 * schedule due tonight fires in the test at once and no test sleeps.
 */

/** Now, and a wake-up at an instant. */
export interface SchedulerClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once the clock reaches `atMs` (at once, asynchronously, when already past). Returns a cancel function. */
  at(atMs: number, fn: () => void): () => void;
}

/** Longest delay `setTimeout` takes (about 24.8 days); longer waits are chained. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** The system clock. Its timers are unref'd: a pending schedule never keeps the process alive. */
export const systemClock: SchedulerClock = {
  now: () => Date.now(),
  at(atMs, fn) {
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      const wait = atMs - Date.now();
      timer = setTimeout(
        () => (atMs - Date.now() > 0 ? arm() : fn()),
        Math.max(0, Math.min(wait, MAX_TIMEOUT_MS)),
      );
      timer.unref();
    };
    arm();
    return () => clearTimeout(timer);
  },
};

/**
 * A clock that moves only when told ({@link advanceTo} / {@link advanceBy}); the wake-ups that
 * come due run in time order, each seeing `now()` at its own instant.
 */
export class ManualClock implements SchedulerClock {
  private current: number;
  private readonly pending = new Set<{ atMs: number; fn: () => void; seq: number }>();
  private seq = 0;

  /** @param startMs the initial time, milliseconds since the epoch (or a Date). */
  constructor(start: number | Date) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.current;
  }

  at(atMs: number, fn: () => void): () => void {
    const entry = { atMs, fn, seq: this.seq++ };
    if (atMs <= this.current) {
      queueMicrotask(() => {
        if (this.pending.delete(entry)) fn();
      });
    }
    this.pending.add(entry);
    return () => {
      this.pending.delete(entry);
    };
  }

  /** Moves the clock to `target` (never backwards), running the wake-ups due on the way. */
  advanceTo(target: number | Date): void {
    const to = typeof target === 'number' ? target : target.getTime();
    for (;;) {
      const due = [...this.pending]
        .filter((e) => e.atMs <= to)
        .sort((a, b) => a.atMs - b.atMs || a.seq - b.seq)[0];
      if (!due) break;
      this.pending.delete(due);
      this.current = Math.max(this.current, due.atMs);
      due.fn();
    }
    this.current = Math.max(this.current, to);
  }

  /** Moves the clock forward by `ms` milliseconds. */
  advanceBy(ms: number): void {
    this.advanceTo(this.current + ms);
  }

  /** The earliest pending wake-up, or undefined. */
  nextWakeUp(): number | undefined {
    const times = [...this.pending].map((e) => e.atMs);
    return times.length === 0 ? undefined : Math.min(...times);
  }
}
