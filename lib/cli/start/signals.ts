/**
 * Ctrl-C as `npm start` sees it: the first stop signal asks for an orderly stop, a later one
 * quits at once, and a copy of the first that arrives with it (relayed by npm) is not a second.
 */
import type { StartIo, StopSignal } from './io.ts';

/**
 * A second stop signal this soon after the first is the same Ctrl-C: a terminal sends SIGINT to
 * the whole process group, and a wrapper in it (npm) relays its own copy to this process.
 */
const SAME_KEYPRESS_MS = 1_000;

/**
 * Calls `first` at the first of `signals`, `again` at a later one (not within
 * {@link SAME_KEYPRESS_MS} of the first), until the returned function removes the listeners.
 */
export function onStopSignals(
  io: Pick<StartIo, 'onSignal'>,
  signals: readonly StopSignal[],
  first: () => void,
  again: () => void,
): () => void {
  let firstAtMs: number | undefined;
  const listener = () => {
    const now = Date.now();
    if (firstAtMs === undefined) {
      firstAtMs = now;
      first();
    } else if (now - firstAtMs >= SAME_KEYPRESS_MS) again();
  };
  const removers = signals.map((signal) => io.onSignal(signal, listener));
  return () => {
    for (const remove of removers) remove();
  };
}
