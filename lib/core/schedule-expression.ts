/**
 * EventBridge Scheduler's schedule expressions, evaluated as AWS does: `at(...)` (one time),
 * `rate(value unit)` and `cron(minutes hours day-of-month month day-of-week year)` in an IANA
 * time zone. The CDK constructs check expressions with it at synth, the local runtime fires
 * schedules by it and the CLI shows next firings with it, so all three agree.
 *
 * Rules and their sources (EventBridge Scheduler User Guide, "Schedule types"):
 * - cron has six fields; one of day-of-month / day-of-week must be `?`; day-of-week is 1–7 or
 *   SUN–SAT with 1 = Sunday; `L`, `W` and `#` are allowed; year is 1970–2199; each field takes
 *   the wildcards AWS lists for it (day-of-week no `/`).
 * - Stricter than AWS may be, never looser (what passes here must pass CreateSchedule; the
 *   expression is sent as written): parts separated by single spaces; ranges from low to high
 *   (the error names the list a wrap-around meant); a step smaller than its field's number of
 *   values (see checkCronParts).
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
/**
 * Per cron field: its name, range, the wildcards AWS lists for it [schedule-types] and the
 * characters that allows. Day-of-week takes no `/` (AWS lists `, - * ? L #` only).
 */
const CRON_FIELDS = [
  { name: 'minutes', min: 0, max: 59, takes: '0-59 and , - * /', pattern: /^[\d,\-*/]+$/ },
  { name: 'hours', min: 0, max: 23, takes: '0-23 and , - * /', pattern: /^[\d,\-*/]+$/ },
  {
    name: 'day-of-month',
    min: 1,
    max: 31,
    takes: '1-31 and , - * ? / L W',
    pattern: /^(\?|L|LW|\d{1,2}W|[\d,\-*/]+)$/,
  },
  {
    name: 'month',
    min: 1,
    max: 12,
    takes: '1-12 or JAN-DEC and , - * /',
    pattern: new RegExp(`^([\\d,\\-*/]|${MONTHS})+$`),
  },
  {
    name: 'day-of-week',
    min: 1,
    max: 7,
    takes: '1-7 or SUN-SAT and , - * ? L #',
    pattern: new RegExp(`^(\\?|L|[1-7]L|[1-7]#[1-5]|(${DAYS})#[1-5]|([\\d,\\-*]|${DAYS})+)$`),
  },
  { name: 'year', min: 1970, max: 2199, takes: '1970-2199 and , - * /', pattern: /^[\d,\-*/]+$/ },
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
  const spaced = singleSpaced(text);
  if (spaced !== text) {
    // Checked and sent as written: a spacing AWS might read otherwise is refused, not normalized.
    let fixed: string;
    try {
      parseScheduleExpression(spaced);
      fixed = `: write ${spaced}`;
    } catch (error) {
      fixed = `; spaced so, ${(error as Error).message}`;
    }
    throw new ScheduleExpressionError(
      `${JSON.stringify(text)} is not spaced as in AWS's examples, the form sqs-jobs checks and sends: one space between parts, none after '(' or before ')', nothing around the expression, no tab or line break${fixed}`,
    );
  }
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
    return {
      kind: 'cron',
      text,
      fields: checkCronFields(text, cron[1] === '' ? [] : (cron[1] as string).split(' ')),
    };
  throw new ScheduleExpressionError(
    `${JSON.stringify(text)} is not a schedule expression: write at(yyyy-mm-ddThh:mm:ss), rate(value minutes|hours|days) or cron(minutes hours day-of-month month day-of-week year)`,
  );
}

/** `text` with its whitespace as AWS documents expressions: one space between parts, none at the ends or inside the parentheses. */
function singleSpaced(text: string): string {
  return text.trim().replace(/\s+/g, ' ').replace(/\( /, '(').replace(/ \)$/, ')');
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
        `${text}: ${spec.name} field ${JSON.stringify(field)} is not allowed there: the ${spec.name} field takes ${spec.takes} [schedule-types]`,
      );
    checkCronParts(text, spec, upper);
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
  // What the checks above do not know, croner (which evaluates the fields) may still refuse: its
  // refusal becomes ours here, so no path (synth, local Scheduler, CLI) ever shows croner's own.
  cronerOf(text, fields, 'UTC');
  return fields;
}

/** A value of a cron field: a number, or a month or day name where the field takes names. */
const VALUE = `(?:\\d+|${MONTHS}|${DAYS})`;
/** One comma-separated part of a general cron field: `*`, a value or a range, with an optional step. */
const CRON_PART = new RegExp(`^(\\*|${VALUE}(?:-${VALUE})?)(?:/(\\d+))?$`);
const NAME_VALUES: Readonly<Record<string, number>> = Object.fromEntries([
  ...MONTHS.split('|').map((m, i) => [m, i + 1]),
  ...DAYS.split('|').map((d, i) => [d, i + 1]),
]);

/**
 * The structure of each comma-separated part of a general field (the special forms `?`, `L`,
 * `W`, `#` are whole fields, matched by the field's pattern): `*`, `v`, `a-b`, each with an
 * optional `/step` [schedule-types: "The / (slash) wildcard specifies increments"].
 * - A range goes from low to high. croner, which evaluates the fields, knows no wrap-around range
 *   and AWS documents none, so `22-2` is refused rather than guessed; the error gives the list
 *   that means it (`22-23,0-2`, `SAT,SUN`).
 * - A step is a whole number from 1 to one less than the number of values in the field (minutes
 *   1–59, hours 1–23, day-of-month 1–30, month 1–11, year 1–229). A step as large as the field
 *   would fire at its start value only, and EventBridge refuses it: `cron(*\/60 * * * ? *)` is
 *   "Parameter ScheduleExpression is not valid" (aws/aws-sdk-js#4212; Quartz, whose cron dialect
 *   EventBridge's is, refuses a minutes increment over 59).
 */
function checkCronParts(text: string, spec: (typeof CRON_FIELDS)[number], upper: string): void {
  if (!/[,\-/*]/.test(upper) || /^(\?|L|LW|\d{1,2}W|[1-7]L|[1-7]#[1-5]|[A-Z]{3}#[1-5])$/.test(upper)) return;
  const fail = (part: string, why: string): never => {
    throw new ScheduleExpressionError(`${text}: ${spec.name} field: ${JSON.stringify(part)} ${why}`);
  };
  for (const part of upper.split(',')) {
    const match = CRON_PART.exec(part);
    if (!match)
      fail(
        part,
        "is not a value, a range (a-b) or '*', each optionally with a step (/n): e.g. 5, 1-5, */15, 0/15",
      );
    const [, base, step] = match as RegExpExecArray;
    const range = (base as string).split('-') as [string] | [string, string];
    if (range.length === 2) {
      const [from, to] = range.map((v) => NAME_VALUES[v] ?? Number(v)) as [number, number];
      if (from > to)
        fail(
          part,
          `runs from ${from} down to ${to}: EventBridge cron ranges run from low to high (no wrap-around); ${
            step === undefined
              ? `to wrap around write ${wrapAroundList(spec, range)}; for ${range[1]} through ${range[0]} write ${range[1]}-${range[0]}`
              : `write it as two ranges from low to high, e.g. ${range[0]}-${spec.max}/${step},${spec.min}-${range[1]}/${step} (each counts its steps from its own start)`
          }`,
        );
    }
    if (step !== undefined) {
      const n = Number(step);
      const values = spec.max - spec.min + 1;
      if (n < 1) fail(part, `has step ${n}: a step (/n) is a positive whole number, e.g. */15`);
      if (n >= values) {
        const start = range[0] === '*' ? String(spec.min) : range[0];
        fail(
          part,
          `has step ${n}: a step is at most ${values - 1} in the ${spec.name} field (${spec.min}–${spec.max}, ${values} values); step ${n} would fire at ${start} only, and EventBridge refuses such steps (*/60 in minutes): write ${start}`,
        );
      }
    }
  }
}

/**
 * The list a wrap-around range `from-to` (from > to) means, in the spelling it was given in:
 * `22-2` → `22-23,0-2`, `FRI-MON` → `FRI-SAT,SUN-MON`, `SAT-SUN` → `SAT,SUN`.
 */
function wrapAroundList(spec: (typeof CRON_FIELDS)[number], [from, to]: [string, string]): string {
  const named = NAME_VALUES[from] !== undefined;
  const spell = (n: number): string =>
    named ? ((spec.name === 'month' ? MONTHS : DAYS).split('|')[n - 1] as string) : String(n);
  const run = (a: string, b: string) => (a === b ? a : `${a}-${b}`);
  return `${run(from, spell(spec.max))},${run(spell(spec.min), to)}`;
}

const CRONER_OPTIONS = { mode: '7-part', alternativeWeekdays: true, domAndDow: false } as const;

/** croner's evaluator of checked fields in `timeZone`; a refusal by croner becomes a ScheduleExpressionError. */
function cronerOf(text: string, fields: readonly string[], timeZone: string): Cron {
  const pattern = `0 ${fields.map((field, i) => withRangedSteps(field, (CRON_FIELDS[i] as (typeof CRON_FIELDS)[number]).max)).join(' ')}`;
  try {
    return new Cron(pattern, { ...CRONER_OPTIONS, timezone: timeZone });
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).replace(/^Cron\w*: /, '');
    throw new ScheduleExpressionError(
      `${text} is not a cron expression EventBridge Scheduler evaluates (${reason}): write cron(minutes hours day-of-month month day-of-week year), e.g. cron(0 23 * * ? *)`,
    );
  }
}

/**
 * Checks an IANA time zone name as EventBridge Scheduler's `ScheduleExpressionTimezone` takes it:
 * a name of the tz database, spelled as it is there (`Europe/Berlin`, not `europe/berlin`). Intl
 * takes any case, but tz database names are case-sensitive identifiers and AWS documents the
 * zone as such a name (schedule-types, "Time zones on EventBridge Scheduler"), so another case is
 * refused here with the name meant rather than left to a deploy-time failure.
 * @throws ScheduleExpressionError naming the zone (and the name meant, for another case).
 */
export function checkTimeZone(timeZone: string): void {
  // Intl takes offsets ("+01:00") as zones; EventBridge Scheduler takes IANA names only.
  if (typeof timeZone !== 'string' || /^[+-]/.test(timeZone))
    throw new ScheduleExpressionError(
      `${JSON.stringify(timeZone)} is not an IANA time zone name (e.g. "Europe/Berlin", "UTC"); an offset has no daylight-saving rules`,
    );
  let canonical: string;
  try {
    canonical = new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions().timeZone;
  } catch {
    throw new ScheduleExpressionError(
      `${JSON.stringify(timeZone)} is not an IANA time zone name (e.g. "Europe/Berlin", "UTC")`,
    );
  }
  // Every tz database name's parts start with a capital; Intl's canonical name gives the spelling.
  const wrongCase =
    timeZone !== canonical &&
    (timeZone.toLowerCase() === canonical.toLowerCase() || /(^|\/)[a-z]/.test(timeZone));
  if (wrongCase)
    throw new ScheduleExpressionError(
      `${JSON.stringify(timeZone)} is not spelled as the IANA time zone name (names are case-sensitive): did you mean ${JSON.stringify(canonical)}?`,
    );
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
  const text = `cron(${fields.join(' ')})`;
  const inZone = cronerOf(text, fields, timeZone);
  // The same pattern on a clock without daylight saving: it says whether a wall-clock time matches.
  const onWallClock = cronerOf(text, fields, 'UTC');
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
