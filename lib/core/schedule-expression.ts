/**
 * EventBridge Scheduler's schedule expressions, evaluated as AWS does: `at(...)` (one time),
 * `rate(value unit)` and `cron(minutes hours day-of-month month day-of-week year)` in an IANA
 * time zone. The CDK constructs check expressions with it at synth, the local runtime fires
 * schedules by it and the CLI shows next firings with it, so all three agree.
 *
 * Rules and their sources (EventBridge Scheduler User Guide, "Schedule types"):
 * - cron has six fields; one of day-of-month / day-of-week must be `?`; day-of-week is 1–7 or
 *   SUN–SAT with 1 = Sunday; `L`, `W` and `#` are allowed; year is 1970–2199.
 * - rate: a positive whole number and `minute(s)`, `hour(s)` or `day(s)`; a day is 24 hours of
 *   elapsed time, whatever daylight saving does to the wall clock.
 * - at: `yyyy-mm-ddThh:mm:ss`, a wall-clock time in the schedule's time zone.
 * - Daylight saving: a cron time that does not exist on the day the clocks go forward is
 *   skipped; a time that happens twice when they go back fires once.
 * - Targets are invoked with 60-second precision (within the minute of the firing).
 *
 * The cron fields are matched by croner (a well-kept cron library that knows `L`, `W`, `#`,
 * years and Quartz weekday numbering); this module adds what is AWS's own: the dialect's checks,
 * rate and at, and the daylight-saving rule above.
 */
import { Cron } from 'croner';

/** A parsed schedule expression. */
export type ScheduleExpression =
  | { readonly kind: 'at'; readonly text: string; readonly wallClock: string }
  | { readonly kind: 'rate'; readonly text: string; readonly everyMs: number }
  | { readonly kind: 'cron'; readonly text: string; readonly fields: readonly string[] };

/** A schedule expression or time zone that EventBridge Scheduler would refuse. */
export class ScheduleExpressionError extends Error {
  override readonly name = 'ScheduleExpressionError';
}

const AT = /^at\((\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\)$/;
const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const CRON = /^cron\((.*)\)$/;
const UNIT_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;

const MONTHS = 'JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC';
const DAYS = 'SUN|MON|TUE|WED|THU|FRI|SAT';
/** Per cron field: its name, range and the characters AWS allows in it. */
const CRON_FIELDS = [
  { name: 'minutes', min: 0, max: 59, pattern: /^[\d,\-*/]+$/ },
  { name: 'hours', min: 0, max: 23, pattern: /^[\d,\-*/]+$/ },
  { name: 'day-of-month', min: 1, max: 31, pattern: /^(\?|L|LW|\d{1,2}W|[\d,\-*/]+)$/ },
  { name: 'month', min: 1, max: 12, pattern: new RegExp(`^([\\d,\\-*/]|${MONTHS})+$`) },
  {
    name: 'day-of-week',
    min: 1,
    max: 7,
    pattern: new RegExp(`^(\\?|L|[1-7]L|[1-7]#[1-5]|(${DAYS})#[1-5]|([\\d,\\-*/]|${DAYS})+)$`),
  },
  { name: 'year', min: 1970, max: 2199, pattern: /^[\d,\-*/]+$/ },
] as const;

/**
 * Parses an EventBridge Scheduler expression.
 *
 * @param text e.g. `cron(0 23 * * ? *)`, `rate(5 minutes)`, `at(2026-12-24T18:00:00)`.
 * @throws ScheduleExpressionError saying which part is wrong and what AWS accepts.
 */
export function parseScheduleExpression(text: string): ScheduleExpression {
  if (typeof text !== 'string')
    throw new ScheduleExpressionError(`a schedule expression must be a string, got ${typeof text}`);
  const at = AT.exec(text);
  if (at) {
    const [, y, mo, d, h, mi, s] = at.map(Number) as number[];
    const probe = new Date(Date.UTC(y as number, (mo as number) - 1, d, h, mi, s));
    if (
      probe.getUTCMonth() !== (mo as number) - 1 ||
      probe.getUTCDate() !== d ||
      (h as number) > 23 ||
      (mi as number) > 59 ||
      (s as number) > 59
    )
      throw new ScheduleExpressionError(`${text} is not a real date and time (at(yyyy-mm-ddThh:mm:ss))`);
    return { kind: 'at', text, wallClock: text.slice(3, -1) };
  }
  const rate = RATE.exec(text);
  if (rate) {
    const value = Number(rate[1]);
    const unit = rate[2] as string;
    if (value < 1) throw new ScheduleExpressionError(`${text}: the rate must be a positive whole number`);
    const singular = unit.replace(/s$/, '') as keyof typeof UNIT_MS;
    return { kind: 'rate', text, everyMs: value * UNIT_MS[singular] };
  }
  const cron = CRON.exec(text);
  if (cron)
    return { kind: 'cron', text, fields: checkCronFields(text, (cron[1] as string).trim().split(/\s+/)) };
  throw new ScheduleExpressionError(
    `${JSON.stringify(text)} is not a schedule expression: write at(yyyy-mm-ddThh:mm:ss), rate(value minutes|hours|days) or cron(minutes hours day-of-month month day-of-week year)`,
  );
}

function checkCronFields(text: string, fields: string[]): string[] {
  if (fields.length !== 6)
    throw new ScheduleExpressionError(
      `${text} has ${fields.length} fields; EventBridge cron has six: minutes hours day-of-month month day-of-week year`,
    );
  fields.forEach((field, i) => {
    const spec = CRON_FIELDS[i] as (typeof CRON_FIELDS)[number];
    const upper = field.toUpperCase();
    if (!spec.pattern.test(upper))
      throw new ScheduleExpressionError(
        `${text}: ${spec.name} field ${JSON.stringify(field)} is not allowed there`,
      );
    for (const n of upper.match(/\d+/g) ?? []) {
      const value = Number(n);
      // After '/', a number is a step; after '#', the week's occurrence: neither is a field value.
      const isStepOrNth = new RegExp(`[/#]${n}(?!\\d)`).test(upper);
      if (!isStepOrNth && (value < spec.min || value > spec.max))
        throw new ScheduleExpressionError(
          `${text}: ${spec.name} value ${value} is outside ${spec.min}–${spec.max}`,
        );
    }
  });
  const [, , dayOfMonth, , dayOfWeek] = fields;
  if ((dayOfMonth === '?') === (dayOfWeek === '?'))
    throw new ScheduleExpressionError(
      `${text}: exactly one of day-of-month and day-of-week must be '?' (EventBridge cron cannot combine them)`,
    );
  return fields;
}

/**
 * Checks an IANA time zone name as EventBridge Scheduler's `ScheduleExpressionTimezone` takes it.
 * @throws ScheduleExpressionError naming the zone.
 */
export function checkTimeZone(timeZone: string): void {
  // Intl takes offsets ("+01:00") as zones; EventBridge Scheduler takes IANA names only.
  if (typeof timeZone !== 'string' || /^[+-]/.test(timeZone))
    throw new ScheduleExpressionError(
      `${JSON.stringify(timeZone)} is not an IANA time zone name (e.g. "Europe/Berlin", "UTC"); an offset has no daylight-saving rules`,
    );
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch {
    throw new ScheduleExpressionError(
      `${JSON.stringify(timeZone)} is not an IANA time zone name (e.g. "Europe/Berlin", "UTC")`,
    );
  }
}

/** The wall-clock time of `date` in `timeZone`, as `yyyy-mm-ddThh:mm:ss`. */
export function wallClockOf(date: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(date);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '00';
  return `${get('year')}-${get('month')}-${get('day')}T${get('hour')}:${get('minute')}:${get('second')}`;
}

/**
 * The instant a wall-clock time `yyyy-mm-ddThh:mm:ss` has in `timeZone`; a time skipped by
 * daylight saving gives the instant just after the gap, a repeated one its first occurrence.
 */
export function instantOfWallClock(wallClock: string, timeZone: string): Date {
  const asUtc = Date.parse(`${wallClock}Z`);
  // The zone's offset can differ on either side of the time; two rounds settle it.
  let guess = asUtc;
  for (let i = 0; i < 2; i++)
    guess = asUtc - (Date.parse(`${wallClockOf(new Date(guess), timeZone)}Z`) - guess);
  const earlier = guess - 3_600_000;
  if (wallClockOf(new Date(earlier), timeZone) === wallClock) return new Date(earlier);
  return new Date(guess);
}

/** Options of {@link nextFirings}. */
export interface NextFiringsOptions {
  /** IANA time zone the expression is evaluated in. @default 'UTC' */
  readonly timeZone?: string;
  /** Firings strictly after this instant. */
  readonly after: Date;
  /** How many firings at most. */
  readonly count: number;
  /** A rate schedule's first firing (its `StartDate`); also the earliest firing of any kind. @default `after` for rate */
  readonly startDate?: Date;
  /** No firing at or after this instant (`EndDate`). */
  readonly endDate?: Date;
}

/**
 * The next firing times of a schedule, as EventBridge Scheduler would fire it (to the second;
 * AWS then invokes within that minute).
 *
 * @throws ScheduleExpressionError for a bad expression or time zone.
 */
export function nextFirings(expression: ScheduleExpression | string, options: NextFiringsOptions): Date[] {
  const parsed = typeof expression === 'string' ? parseScheduleExpression(expression) : expression;
  const timeZone = options.timeZone ?? 'UTC';
  checkTimeZone(timeZone);
  const after =
    options.startDate && options.startDate > options.after
      ? new Date(options.startDate.getTime() - 1)
      : options.after;
  const beforeEnd = (d: Date) => options.endDate === undefined || d < options.endDate;
  if (parsed.kind === 'at') {
    const when = instantOfWallClock(parsed.wallClock, timeZone);
    return when > after && beforeEnd(when) && options.count > 0 ? [when] : [];
  }
  if (parsed.kind === 'rate') {
    // A rate schedule fires at its start (StartDate, or creation) and every interval after it.
    const anchor = (options.startDate ?? options.after).getTime();
    const out: Date[] = [];
    let k = Math.max(0, Math.ceil((options.after.getTime() + 1 - anchor) / parsed.everyMs));
    for (; out.length < options.count; k++) {
      const when = new Date(anchor + k * parsed.everyMs);
      if (!beforeEnd(when)) break;
      out.push(when);
    }
    return out;
  }
  return cronFirings(parsed.fields, timeZone, after, options.count, beforeEnd);
}

/** AWS's `start/step` (`0/15`) as croner's `start-max/step`, which means the same. */
function withRangedSteps(field: string, max: number): string {
  return field
    .split(',')
    .map((part) => part.replace(/^(\d+)\/(\d+)$/, `$1-${max}/$2`))
    .join(',');
}

function cronFirings(
  fields: readonly string[],
  timeZone: string,
  after: Date,
  count: number,
  beforeEnd: (d: Date) => boolean,
): Date[] {
  const pattern = `0 ${fields.map((field, i) => withRangedSteps(field, (CRON_FIELDS[i] as (typeof CRON_FIELDS)[number]).max)).join(' ')}`;
  const options = { mode: '7-part', alternativeWeekdays: true, domAndDow: false } as const;
  const inZone = new Cron(pattern, { ...options, timezone: timeZone });
  // The same pattern on a clock without daylight saving: it says whether a wall-clock time matches.
  const onWallClock = new Cron(pattern, { ...options, timezone: 'UTC' });
  const matchesWallClock = (wall: string) => {
    const asUtc = new Date(`${wall}Z`);
    return onWallClock.nextRun(new Date(asUtc.getTime() - 1000))?.getTime() === asUtc.getTime();
  };
  const out: Date[] = [];
  let cursor = after;
  let lastWall = '';
  // Bounded: a firing every minute for a year of skipped candidates is far beyond any real case.
  for (let guard = 0; out.length < count && guard < count + 600_000; guard++) {
    const next = inZone.nextRun(cursor);
    if (next === null || !beforeEnd(next)) break;
    cursor = next;
    const wall = wallClockOf(next, timeZone);
    // Spring forward: croner moves a time inside the gap to its end; AWS skips it.
    if (!matchesWallClock(wall)) continue;
    // Fall back: the repeated hour's wall-clock times fire once, not twice.
    if (wall <= lastWall) continue;
    lastWall = wall;
    out.push(next);
  }
  return out;
}

/**
 * The `at()` expression for an instant, in UTC (use with `ScheduleExpressionTimezone: 'UTC'`).
 * EventBridge takes whole seconds; a fraction is rounded up so a job never fires early.
 */
export function atExpressionOf(instant: Date): string {
  const seconds = new Date(Math.ceil(instant.getTime() / 1000) * 1000);
  return `at(${seconds.toISOString().slice(0, 19)})`;
}
