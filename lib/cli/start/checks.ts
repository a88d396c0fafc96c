/**
 * What `npm start`'s flags mean together: the fault rates of the fake external API (--fault-rate
 * split over the failing kinds, a kind's own flag winning), and the refusals of flags that do not
 * go together (each an `Error` whose message is the `error:` line, exit code 2).
 */
import type { FaultRates } from '../../sample/external-service.ts';
import { OVERRUN_DELAY_MS } from '../../sample/presets.ts';
import type { StartFlags } from './flags.ts';

/** How `--fault-rate` is split over the failing kinds (shares add up to 1). */
const FAULT_SPLIT = { timeout: 0.2, throttle: 0.35, unavailable: 0.35, badRequest: 0.1 } as const;

/** Flags that only shape the workload or its report: refused with --no-workload when given. */
export const WORKLOAD_FLAGS = [
  'users',
  'jobs',
  'bookingsPerUser',
  'outOfStock',
  'malformed',
  'duplicates',
  'timeoutSeconds',
  'soak',
] as const;

/** The fault rates of the fake external API: each kind's own flag, else its share of --fault-rate. */
export function faultRates(flags: StartFlags): FaultRates {
  return {
    timeout: flags.timeoutRate ?? flags.faultRate * FAULT_SPLIT.timeout,
    throttle: flags.throttleRate ?? flags.faultRate * FAULT_SPLIT.throttle,
    unavailable: flags.unavailableRate ?? flags.faultRate * FAULT_SPLIT.unavailable,
    badRequest: flags.badRequestRate ?? flags.faultRate * FAULT_SPLIT.badRequest,
    slow: flags.slowRate,
    overrun: flags.overrunRate,
    kill: flags.killRate,
  };
}

/**
 * Refuses fault rates that add up to more than 1, naming each rate summed and where it came from
 * (its own flag, or its share of --fault-rate; --slow-rate and its default count too).
 * @throws {Error} when the sum is above 1.
 */
export function checkFaultRates(flags: StartFlags, faults: FaultRates): void {
  const sum = Object.values(faults).reduce((a, b) => a + b, 0);
  if (sum <= 1 + 1e-9) return;
  const fmt = (n: number) => String(Number(n.toFixed(4)));
  const share = (own: number | undefined, flag: string, split: number) =>
    own !== undefined
      ? `${flag} ${fmt(own)}`
      : `${fmt(flags.faultRate * split)} (${split * 100}% of --fault-rate ${fmt(flags.faultRate)})`;
  const parts = [
    `timeout ${share(flags.timeoutRate, '--timeout-rate', FAULT_SPLIT.timeout)}`,
    `429 ${share(flags.throttleRate, '--throttle-rate', FAULT_SPLIT.throttle)}`,
    `503 ${share(flags.unavailableRate, '--unavailable-rate', FAULT_SPLIT.unavailable)}`,
    `400 ${share(flags.badRequestRate, '--bad-request-rate', FAULT_SPLIT.badRequest)}`,
    `slow --slow-rate ${fmt(flags.slowRate)}`,
    ...(flags.overrunRate > 0 ? [`overrun --overrun-rate ${fmt(flags.overrunRate)}`] : []),
    ...(flags.killRate > 0 ? [`kill --kill-rate ${fmt(flags.killRate)}`] : []),
  ];
  throw new Error(
    `the fault rates add up to ${fmt(sum)}, more than 1: ${parts.join(' + ')}. ` +
      'Lower them; a rate not given on the command line is its share of --fault-rate (default 0.05), and --slow-rate defaults to 0.03.',
  );
}

/**
 * Checks the flags that depend on each other: --no-workload refuses the workload's flags when
 * given; --jobs and --users exclude each other; an overrun must outlast the job's time limit
 * under the client timeout.
 * @param usersGiven whether --users was on the command line.
 * @param given whether a workload flag was on the command line.
 * @throws {Error} naming the flags that do not go together.
 */
export function checkCombinations(
  flags: StartFlags,
  usersGiven: boolean,
  given: (flag: (typeof WORKLOAD_FLAGS)[number]) => boolean = () => false,
): void {
  if (!flags.workload) {
    const workloadFlags = WORKLOAD_FLAGS.filter(given);
    if (workloadFlags.length > 0) {
      const names = workloadFlags.map((f) => `--${f.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
      throw new Error(
        `--no-workload runs no workload: ${names.join(', ')} ${names.length === 1 ? 'has' : 'have'} nothing to do (the fault flags still set the fake external API)`,
      );
    }
  }
  if (flags.jobs !== undefined && usersGiven) {
    throw new Error('--jobs sets --users: give one of them, not both');
  }
  if (flags.overrunRate > 0 && flags.externalTimeoutMs <= OVERRUN_DELAY_MS) {
    throw new Error(
      `--overrun-rate needs --external-timeout-ms above ${OVERRUN_DELAY_MS} (got ${flags.externalTimeoutMs}): ` +
        "otherwise the client's timeout ends the call before the job's time limit",
    );
  }
}
