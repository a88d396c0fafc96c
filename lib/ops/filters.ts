/**
 * Selecting dead-lettered messages by their evidence: job type, reason, error name, job id.
 *
 * Each criterion takes one or more patterns; a message matches a criterion when it matches any of
 * its patterns, and matches the filter when it matches every criterion given. A pattern is an
 * exact, case-sensitive value, or contains `*` wildcards (any run of characters):
 * `--reason 'attempts-used-up*'` matches every "attempts used up" reason.
 */
import type { DeadLetterMessage } from './dead-letter-message.ts';

/** Criteria; an absent or empty list does not restrict. */
export interface DeadLetterFilter {
  /** Patterns for {@link DeadLetterMessage.jobType}. */
  readonly jobTypes?: readonly string[];
  /** Patterns for {@link DeadLetterMessage.reason} (`ErrorReason`, or `no-evidence`). */
  readonly reasons?: readonly string[];
  /** Patterns for {@link DeadLetterMessage.errorName} (`ErrorName`, or `(none)`). */
  readonly errorNames?: readonly string[];
  /** Patterns for the envelope `id` of the job in the body. */
  readonly jobIds?: readonly string[];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether `value` matches `pattern` (exact, or with `*` standing for any characters). */
export function matchesPattern(value: string | undefined, pattern: string): boolean {
  if (value === undefined) return false;
  if (!pattern.includes('*')) return value === pattern;
  const source = pattern.split('*').map(escapeRegExp).join('.*');
  return new RegExp(`^${source}$`, 's').test(value);
}

function any(value: string | undefined, patterns: readonly string[] | undefined): boolean {
  if (patterns === undefined || patterns.length === 0) return true;
  return patterns.some((pattern) => matchesPattern(value, pattern));
}

/** Whether the filter has no criterion (selects every message). */
export function isEmptyFilter(filter: DeadLetterFilter): boolean {
  return [filter.jobTypes, filter.reasons, filter.errorNames, filter.jobIds].every(
    (list) => list === undefined || list.length === 0,
  );
}

/** Compiles a filter into a predicate. */
export function compileFilter(filter: DeadLetterFilter): (message: DeadLetterMessage) => boolean {
  return (message) =>
    any(message.jobType, filter.jobTypes) &&
    any(message.reason, filter.reasons) &&
    any(message.errorName, filter.errorNames) &&
    any(message.job?.id, filter.jobIds);
}

/** The filter in words, e.g. `job type orders.* and reason PermanentError or HTTP 404`; `all messages` when empty. */
export function describeFilter(filter: DeadLetterFilter): string {
  const parts: string[] = [];
  const add = (label: string, list: readonly string[] | undefined) => {
    if (list && list.length > 0) parts.push(`${label} ${list.join(' or ')}`);
  };
  add('job type', filter.jobTypes);
  add('reason', filter.reasons);
  add('error name', filter.errorNames);
  add('job id', filter.jobIds);
  return parts.length === 0 ? 'all messages' : parts.join(' and ');
}
