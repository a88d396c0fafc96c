/**
 * The flags of `npm start` (and `npm run soak`): their parsed shape, the parsers of their values
 * (each refusal names what a value must be; commander adds the flag) and the workload's bounds.
 * The checks of flags against each other are in ./checks.ts.
 */
import { InvalidArgumentError } from 'commander';

/** Upper bounds of the workload size: beyond them a local run only eats memory and time. */
export const MAX_USERS = 10_000;
export const MAX_BOOKINGS_PER_USER = 20;
export const MAX_BATCHES = 10_000;

/** The flags as commander parses them (camelCase names, defaults from the preset). */
export interface StartFlags {
  readonly soak: boolean;
  readonly users: number;
  readonly jobs?: number;
  readonly bookingsPerUser: number;
  readonly seed: number;
  readonly faultRate: number;
  readonly timeoutRate?: number;
  readonly throttleRate?: number;
  readonly unavailableRate?: number;
  readonly badRequestRate?: number;
  readonly slowRate: number;
  readonly overrunRate: number;
  readonly killRate: number;
  /**
   * The fake partner API's rate limit per tenant, requests per second; none when absent or
   * `false` (--no-partner-rate-limit).
   */
  readonly partnerRateLimit?: number | false;
  /** False with --no-limits: the sample jobs skip their own rate limit on the partner. */
  readonly limits: boolean;
  readonly dynamodbFaultRate: number;
  readonly sqsFaultRate: number;
  readonly externalTimeoutMs: number;
  readonly lostResponseRate: number;
  readonly visibilityTimeoutSeconds: number | 'deployed';
  readonly outOfStock: number;
  readonly malformed: number;
  readonly duplicates: number;
  readonly timeoutSeconds: number;
  /** Bookings that get a reservation hold sent for later. */
  readonly holds: number;
  readonly holdDelayMs: number;
  /** Small batches sent besides the workload (lib/sample/soak-batches.ts); 0: none. */
  readonly batches: number;
  /** Bookings of the nightly run's backlog; 0: the nightly schedule is not fired. */
  readonly nightlyBacklog: number;
  readonly schedulerDuplicateRate: number;
  readonly endpoint?: string;
  readonly json: boolean;
  readonly keepRunning: boolean;
  readonly console: boolean;
  /** False with --no-workload. */
  readonly workload: boolean;
  readonly consoleHost: string;
  readonly consolePort: number;
  readonly readOnly: boolean;
}

/**
 * Parser of an integer from `min` to `max` (no upper bound when absent).
 * @throws {InvalidArgumentError} "must be an integer ..." (the bound printed with thousands separators).
 */
export function integer(min: number, max?: number) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n) || n < min || (max !== undefined && n > max)) {
      throw new InvalidArgumentError(
        max === undefined
          ? `must be an integer >= ${min}`
          : `must be an integer from ${min} to ${max.toLocaleString('en-US')}`,
      );
    }
    return n;
  };
}

/**
 * Parser of an http(s) URL, returned as given.
 * @throws {InvalidArgumentError} for anything else.
 */
export function endpointUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be an http(s) URL, e.g. http://localhost:5000');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidArgumentError('must be an http(s) URL, e.g. http://localhost:5000');
  }
  return value;
}

/**
 * Parser of a rate: a number from 0 to 1.
 * @throws {InvalidArgumentError} for anything else.
 */
export function rate(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) {
    throw new InvalidArgumentError('must be a number from 0 to 1');
  }
  return n;
}

/**
 * Parser of a positive number of requests per second (--partner-rate-limit).
 * @throws {InvalidArgumentError} for anything else.
 */
export function perSecond(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) {
    throw new InvalidArgumentError('must be a number of requests per second > 0, e.g. 5');
  }
  return n;
}

/**
 * Parser of --visibility-timeout-seconds: "deployed", or whole seconds from 1 to 43200.
 * @throws {InvalidArgumentError} for anything else.
 */
export function visibility(value: string): number | 'deployed' {
  if (value === 'deployed') return value;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 43_200) {
    throw new InvalidArgumentError('must be "deployed" or whole seconds from 1 to 43200');
  }
  return n;
}
