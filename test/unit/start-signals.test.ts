/**
 * Ctrl-C in `npm start` (lib/cli/start/signals.ts), with the process's signals injected: the
 * first stop signal asks for an orderly stop; a copy within a second (npm relaying the terminal's
 * SIGINT) is the same key press; a later one quits at once.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { StopSignal } from '../../lib/cli/start/io.ts';
import { onStopSignals } from '../../lib/cli/start/signals.ts';

/** Signals delivered by hand, as the process would. */
function fakeSignals() {
  const listeners = new Map<StopSignal, Set<() => void>>();
  return {
    onSignal(signal: StopSignal, listener: () => void) {
      const set = listeners.get(signal) ?? new Set();
      set.add(listener);
      listeners.set(signal, set);
      return () => set.delete(listener);
    },
    send(signal: StopSignal) {
      for (const listener of listeners.get(signal) ?? []) listener();
    },
    count: () => [...listeners.values()].reduce((n, set) => n + set.size, 0),
  };
}

describe('onStopSignals', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('stops at the first signal, takes a copy within 1 s for the same Ctrl-C, quits at a later one', () => {
    const io = fakeSignals();
    const first = vi.fn();
    const again = vi.fn();
    onStopSignals(io, ['SIGINT', 'SIGTERM'], first, again);
    io.send('SIGINT');
    expect(first).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(999);
    io.send('SIGINT');
    expect(again).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    io.send('SIGTERM');
    expect(first).toHaveBeenCalledTimes(1);
    expect(again).toHaveBeenCalledTimes(1);
  });

  it('removes its listeners when told to', () => {
    const io = fakeSignals();
    const first = vi.fn();
    const stop = onStopSignals(io, ['SIGINT', 'SIGTERM'], first, () => {});
    expect(io.count()).toBe(2);
    stop();
    expect(io.count()).toBe(0);
    io.send('SIGINT');
    expect(first).not.toHaveBeenCalled();
  });
});
