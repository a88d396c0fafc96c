/**
 * Per-key concurrency of a job (`defineJob({ concurrency })`): its shape, its checks, and the
 * key of one record. The slots themselves are kept by {@link ConcurrencySlots} (slots.ts).
 */
import { keyFunctionProblem, keyResultProblem } from '../../core/key-function.ts';
import { shownValue } from '../../core/shown-value.ts';
import { ConcurrencyKeyError } from './errors.ts';

/**
 * At most `limit` runs at once per key, across every Lambda instance (docs/architecture.md,
 * "Flow control"). A record over the limit waits without spending an attempt.
 */
export interface ConcurrencyOptions<Data> {
  /**
   * The key the limit counts by (tenant, account, partner) from the validated data. Must return a
   * non-empty string, synchronously (an `async` function is refused by `defineJob`); a throw or
   * anything else dead-letters the record (`ConcurrencyKeyError`, permanent: it would fail on
   * every delivery).
   */
  readonly key: (data: Data) => string;
  /** Most runs of one key at once: an integer from 1 to {@link MAX_CONCURRENCY_LIMIT}. */
  readonly limit: number;
  /**
   * The name the slots are counted under. Jobs that give the same name (and the same `limit`)
   * share the slots of a key: "at most 2 jobs of any kind per tenant".
   * @default the job's `type`
   */
  readonly name?: string;
}

/**
 * Highest `limit`: the slots of one key are a map in one DynamoDB item (400 KB), each holder a
 * token and an expiry (about 40 bytes).
 */
export const MAX_CONCURRENCY_LIMIT = 1000;

const FIELDS: ReadonlySet<string> = new Set(['key', 'limit', 'name']);

/** What is wrong with a job's `concurrency` option; empty when it is fine or absent. */
export function concurrencyProblems(options: unknown): string[] {
  if (options === undefined) return [];
  if (typeof options !== 'object' || options === null) {
    return [`concurrency must be an object { key, limit, name? }, got ${String(options)}`];
  }
  const o = options as Record<string, unknown>;
  const problems = Object.keys(o)
    .filter((field) => !FIELDS.has(field))
    .map((field) => `unknown field concurrency.${field} (known: key, limit, name)`);
  const keyProblem = keyFunctionProblem(o.key, 'concurrency.key');
  if (keyProblem !== undefined) problems.push(keyProblem);
  if (!Number.isInteger(o.limit) || (o.limit as number) < 1 || (o.limit as number) > MAX_CONCURRENCY_LIMIT) {
    problems.push(
      `concurrency.limit must be an integer from 1 to ${MAX_CONCURRENCY_LIMIT}, got ${shownValue(o.limit)}`,
    );
  }
  if (o.name !== undefined && (typeof o.name !== 'string' || o.name === '')) {
    problems.push(`concurrency.name must be a non-empty string, got ${shownValue(o.name)}`);
  }
  return problems;
}

/**
 * The concurrency key of one record.
 * @throws {ConcurrencyKeyError} when `key(data)` throws or returns no non-empty string.
 */
export function concurrencyKeyOf<Data>(
  jobType: string,
  options: ConcurrencyOptions<Data>,
  data: Data,
): string {
  const name = options.name ?? jobType;
  let key: unknown;
  try {
    key = options.key(data);
  } catch (error) {
    const what = error instanceof Error ? `${error.name}: ${error.message}` : `a non-error (${typeof error})`;
    throw new ConcurrencyKeyError(jobType, name, `concurrency.key(data) threw ${what}`, error);
  }
  if (typeof key !== 'string' || key === '') {
    throw new ConcurrencyKeyError(jobType, name, keyResultProblem(key, 'concurrency.key'));
  }
  return key;
}
