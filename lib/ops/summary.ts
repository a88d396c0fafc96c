/**
 * Dead-lettered messages grouped by cause: counts, first and last failure, attempts, handler
 * versions, a few distinct error messages and one sample message per group.
 */
import type { DeadLetterMessage } from './dead-letter-message.ts';

/** What messages can be grouped by, outermost first. */
export type GroupKey = 'reason' | 'jobType' | 'errorName' | 'handlerVersion';

/** All group keys, as accepted by {@link summarizeDeadLetters}. */
export const GROUP_KEYS: readonly GroupKey[] = ['reason', 'jobType', 'errorName', 'handlerVersion'];

/** Default grouping: by cause (`ErrorReason`), then job type. */
export const DEFAULT_GROUP_BY: readonly GroupKey[] = ['reason', 'jobType'];

/** Longest sample body kept in a summary, in characters (the rest is cut with a marker). */
export const SAMPLE_BODY_MAX_CHARS = 2_000;

const NO_HANDLER_VERSION = '(none)';

/** One sample message of a group. */
export interface GroupSample {
  readonly messageId: string;
  /** Envelope `id` of the job, when the body has one. */
  readonly jobId: string | undefined;
  /** The chain the job belongs to, from its body: root id (its own id for a root), correlation id, trace id. */
  readonly rootJobId?: string;
  readonly correlationId?: string;
  readonly traceId?: string;
  readonly errorMessage: string | undefined;
  /** The body, cut to {@link SAMPLE_BODY_MAX_CHARS}. */
  readonly body: string;
}

/** A group of messages sharing the values of the group keys. */
export interface DeadLetterGroup {
  /** The group's value for each key of `groupBy`. */
  readonly key: Readonly<Partial<Record<GroupKey, string>>>;
  readonly count: number;
  /** Count per `ErrorName`, most frequent first. */
  readonly errorNames: readonly { readonly name: string; readonly count: number }[];
  /** Earliest `FirstFailureAt` (ISO 8601), when any message has one. */
  readonly firstFailureAt: string | undefined;
  /** Latest `LastFailureAt` (ISO 8601), when any message has one. */
  readonly lastFailureAt: string | undefined;
  /** When the oldest and newest messages entered the DLQ (`SentTimestamp`, ISO 8601). */
  readonly oldestSentAt: string | undefined;
  readonly newestSentAt: string | undefined;
  /** Least and most `Attempts`, when any message has the attribute. */
  readonly attempts: { readonly min: number; readonly max: number } | undefined;
  /** Distinct `HandlerVersion`s, sorted. */
  readonly handlerVersions: readonly string[];
  /** Up to `samples` distinct `ErrorMessage`s, most frequent first. */
  readonly errorMessages: readonly string[];
  /** The message that failed last. */
  readonly sample: GroupSample;
}

/** Outcome of {@link summarizeDeadLetters}. */
export interface DeadLetterSummary {
  readonly total: number;
  readonly groupBy: readonly GroupKey[];
  /**
   * Groups ordered level by level: the largest outer group first (ties by name), and inside it
   * its largest sub-groups first.
   */
  readonly groups: readonly DeadLetterGroup[];
}

/** Options of {@link summarizeDeadLetters}. */
export interface SummaryOptions {
  /** @default ['reason', 'jobType'] */
  readonly groupBy?: readonly GroupKey[];
  /** Distinct error messages kept per group. @default 3 */
  readonly samples?: number;
}

function keyValue(message: DeadLetterMessage, key: GroupKey): string {
  switch (key) {
    case 'reason':
      return message.reason;
    case 'jobType':
      return message.jobType;
    case 'errorName':
      return message.errorName;
    case 'handlerVersion':
      return message.evidence.handlerVersion ?? NO_HANDLER_VERSION;
  }
}

function byCountThenName<T extends { name: string; count: number }>(a: T, b: T): number {
  return b.count - a.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

function counted(values: Iterable<string>): { name: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts].map(([name, count]) => ({ name, count })).sort(byCountThenName);
}

function extremeIso(values: Iterable<string | number | undefined>, pick: 'min' | 'max'): string | undefined {
  let best: number | undefined;
  for (const value of values) {
    const ms = typeof value === 'number' ? value : value === undefined ? Number.NaN : Date.parse(value);
    if (!Number.isFinite(ms)) continue;
    if (best === undefined || (pick === 'min' ? ms < best : ms > best)) best = ms;
  }
  return best === undefined ? undefined : new Date(best).toISOString();
}

function failedAtMs(message: DeadLetterMessage): number {
  const last = message.evidence.lastFailureAt ? Date.parse(message.evidence.lastFailureAt) : Number.NaN;
  return Number.isFinite(last) ? last : (message.sentAtMs ?? 0);
}

/** Cuts a text to `maxChars` characters, marking the cut. */
export function cutText(text: string, maxChars: number): string {
  return text.length <= maxChars
    ? text
    : `${text.slice(0, maxChars)}…[${text.length - maxChars} more characters]`;
}

function group(
  key: Partial<Record<GroupKey, string>>,
  messages: readonly DeadLetterMessage[],
  samples: number,
): DeadLetterGroup {
  const attempts = messages.flatMap((m) => (m.evidence.attempts === undefined ? [] : [m.evidence.attempts]));
  const last = messages.reduce((a, b) => (failedAtMs(b) > failedAtMs(a) ? b : a));
  return {
    key,
    count: messages.length,
    errorNames: counted(messages.map((m) => m.errorName)),
    firstFailureAt: extremeIso(
      messages.map((m) => m.evidence.firstFailureAt),
      'min',
    ),
    lastFailureAt: extremeIso(
      messages.map((m) => m.evidence.lastFailureAt),
      'max',
    ),
    oldestSentAt: extremeIso(
      messages.map((m) => m.sentAtMs),
      'min',
    ),
    newestSentAt: extremeIso(
      messages.map((m) => m.sentAtMs),
      'max',
    ),
    attempts: attempts.length === 0 ? undefined : { min: Math.min(...attempts), max: Math.max(...attempts) },
    handlerVersions: [
      ...new Set(messages.flatMap((m) => (m.evidence.handlerVersion ? [m.evidence.handlerVersion] : []))),
    ].sort(),
    errorMessages: counted(
      messages.flatMap((m) => (m.evidence.errorMessage ? [m.evidence.errorMessage] : [])),
    )
      .slice(0, samples)
      .map((entry) => entry.name),
    sample: {
      messageId: last.messageId,
      jobId: last.job?.id,
      ...(last.job === undefined ? {} : { rootJobId: last.job.rootId ?? last.job.id }),
      ...(last.job?.correlationId === undefined ? {} : { correlationId: last.job.correlationId }),
      ...(last.job?.traceId === undefined ? {} : { traceId: last.job.traceId }),
      errorMessage: last.evidence.errorMessage,
      body: cutText(last.body, SAMPLE_BODY_MAX_CHARS),
    },
  };
}

/**
 * Groups messages by the keys of `groupBy` (outermost first).
 *
 * @throws {RangeError} for an empty `groupBy` or an unknown key.
 */
export function summarizeDeadLetters(
  messages: readonly DeadLetterMessage[],
  options: SummaryOptions = {},
): DeadLetterSummary {
  const groupBy = options.groupBy ?? DEFAULT_GROUP_BY;
  if (groupBy.length === 0) throw new RangeError('groupBy needs at least one key');
  for (const key of groupBy) {
    if (!GROUP_KEYS.includes(key)) {
      throw new RangeError(`unknown group key "${key}" (one of ${GROUP_KEYS.join(', ')})`);
    }
  }
  const samples = options.samples ?? 3;
  const buckets = new Map<string, { values: string[]; messages: DeadLetterMessage[] }>();
  const prefixCounts = new Map<string, number>();
  for (const message of messages) {
    const values = groupBy.map((key) => keyValue(message, key));
    const id = JSON.stringify(values);
    const bucket = buckets.get(id) ?? { values, messages: [] };
    bucket.messages.push(message);
    buckets.set(id, bucket);
    for (let depth = 1; depth <= values.length; depth++) {
      const prefix = JSON.stringify(values.slice(0, depth));
      prefixCounts.set(prefix, (prefixCounts.get(prefix) ?? 0) + 1);
    }
  }
  const ordered = [...buckets.values()].sort((a, b) => {
    for (let depth = 1; depth <= groupBy.length; depth++) {
      const countA = prefixCounts.get(JSON.stringify(a.values.slice(0, depth))) ?? 0;
      const countB = prefixCounts.get(JSON.stringify(b.values.slice(0, depth))) ?? 0;
      if (countA !== countB) return countB - countA;
      const nameA = a.values[depth - 1] as string;
      const nameB = b.values[depth - 1] as string;
      if (nameA !== nameB) return nameA < nameB ? -1 : 1;
    }
    return 0;
  });
  return {
    total: messages.length,
    groupBy,
    groups: ordered.map((bucket) =>
      group(Object.fromEntries(groupBy.map((key, i) => [key, bucket.values[i]])), bucket.messages, samples),
    ),
  };
}
