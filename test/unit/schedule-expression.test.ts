import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  atExpressionOf,
  instantOfWallClock,
  nextFirings,
  parseScheduleExpression,
  ScheduleExpressionError,
} from '../../lib/core/schedule-expression.ts';

const after = new Date('2026-12-01T00:00:00Z');
const iso = (dates: Date[]) => dates.map((d) => d.toISOString());

describe('EventBridge cron, evaluated as AWS does', () => {
  it('fires the nightly 23:00 in its time zone, not in UTC', () => {
    expect(iso(nextFirings('cron(0 23 * * ? *)', { after, count: 2, timeZone: 'Europe/Berlin' }))).toEqual([
      '2026-12-01T22:00:00.000Z',
      '2026-12-02T22:00:00.000Z',
    ]);
  });

  it('numbers weekdays 1-7 from Sunday, and knows #, L and W', () => {
    // 2#1: the first Monday (AWS: 2 = MON). 6L: the last Friday. 3W: the weekday nearest the 3rd.
    expect(iso(nextFirings('cron(0 9 ? * 2#1 *)', { after, count: 2 }))).toEqual([
      '2026-12-07T09:00:00.000Z',
      '2027-01-04T09:00:00.000Z',
    ]);
    expect(iso(nextFirings('cron(0 0 ? * 6L *)', { after, count: 1 }))).toEqual(['2026-12-25T00:00:00.000Z']);
    // 2027-01-03 is a Sunday: the nearest weekday is Monday the 4th.
    expect(
      iso(nextFirings('cron(0 0 3W * ? *)', { after: new Date('2026-12-04T00:00:00Z'), count: 1 })),
    ).toEqual(['2027-01-04T00:00:00.000Z']);
    expect(
      iso(nextFirings('cron(0 18 ? * MON-FRI *)', { after: new Date('2026-12-04T19:00:00Z'), count: 1 })),
    ).toEqual(['2026-12-07T18:00:00.000Z']);
  });

  it('reads start/step (0/15) and the year field', () => {
    expect(iso(nextFirings('cron(0/15 * * * ? *)', { after, count: 2 }))).toEqual([
      '2026-12-01T00:15:00.000Z',
      '2026-12-01T00:30:00.000Z',
    ]);
    expect(iso(nextFirings('cron(0 12 1 1 ? 2028)', { after, count: 2 }))).toEqual([
      '2028-01-01T12:00:00.000Z',
    ]);
  });

  it('skips a time the clocks jump over, and fires a repeated time once', () => {
    // Berlin: 2027-03-28 02:00 → 03:00 (02:30 does not exist); 2027-10-31 03:00 → 02:00.
    expect(
      iso(
        nextFirings('cron(30 2 * * ? *)', {
          after: new Date('2027-03-27T00:00:00Z'),
          count: 2,
          timeZone: 'Europe/Berlin',
        }),
      ),
    ).toEqual(['2027-03-27T01:30:00.000Z', '2027-03-29T00:30:00.000Z']);
    expect(
      iso(
        nextFirings('cron(*/30 * * * ? *)', {
          after: new Date('2027-10-30T23:50:00Z'),
          count: 3,
          timeZone: 'Europe/Berlin',
        }),
      ),
    ).toEqual(['2027-10-31T00:00:00.000Z', '2027-10-31T00:30:00.000Z', '2027-10-31T02:00:00.000Z']);
  });

  it.each([
    ['cron(0 10 * * * *)', "exactly one of day-of-month and day-of-week must be '?'"],
    ['cron(0 10 ? * 8 *)', 'day-of-week value 8 is outside 1–7'],
    ['cron(0 10 * * ?)', 'has 5 fields; EventBridge cron has six'],
    ['cron(60 10 * * ? *)', 'minutes value 60 is outside 0–59'],
    ['cron(0 10 * * ? 1969)', 'year value 1969 is outside 1970–2199'],
    ['rate(0 minutes)', 'positive whole number'],
    ['rate(5 seconds)', 'is not a schedule expression'],
    ['at(2027-02-30T18:00:00)', 'is not a real date and time'],
    ['0 23 * * *', 'is not a schedule expression'],
  ])('refuses %s, saying why', (text, message) => {
    expect(() => parseScheduleExpression(text)).toThrow(ScheduleExpressionError);
    expect(() => parseScheduleExpression(text)).toThrow(message);
  });

  it('refuses a time zone that is not an IANA name', () => {
    expect(() => nextFirings('rate(1 hour)', { after, count: 1, timeZone: 'Mars/Olympus' })).toThrow(
      'is not an IANA time zone name',
    );
  });
});

describe('rate and at', () => {
  it('a rate fires at its start date and every interval of elapsed time after it', () => {
    const startDate = new Date('2026-12-05T10:00:00Z');
    expect(iso(nextFirings('rate(1 day)', { after, count: 2, startDate }))).toEqual([
      '2026-12-05T10:00:00.000Z',
      '2026-12-06T10:00:00.000Z',
    ]);
    expect(iso(nextFirings('rate(5 minutes)', { after, count: 1 }))).toEqual(['2026-12-01T00:05:00.000Z']);
  });

  it('an at() time is a wall-clock time in the schedule zone, and fires once', () => {
    expect(
      iso(nextFirings('at(2026-12-24T18:00:00)', { after, count: 5, timeZone: 'Europe/Berlin' })),
    ).toEqual(['2026-12-24T17:00:00.000Z']);
    expect(nextFirings('at(2026-11-24T18:00:00)', { after, count: 5 })).toEqual([]);
  });

  it('an end date stops the firings', () => {
    expect(
      nextFirings('rate(1 hour)', { after, count: 5, endDate: new Date('2026-12-01T02:00:00Z') }),
    ).toHaveLength(1);
  });

  it('atExpressionOf rounds up to the second so a job never fires early, and round-trips', () => {
    const at = atExpressionOf(new Date('2026-12-01T10:00:00.200Z'));
    expect(at).toBe('at(2026-12-01T10:00:01)');
    expect(iso(nextFirings(at, { after, count: 1 }))).toEqual(['2026-12-01T10:00:01.000Z']);
  });

  it('instantOfWallClock gives the first of a repeated time', () => {
    expect(instantOfWallClock('2027-10-31T02:30:00', 'Europe/Berlin').toISOString()).toBe(
      '2027-10-31T00:30:00.000Z',
    );
  });
});

describe("every malformed cron gives our error, never the cron library's", () => {
  it.each([
    ['cron(0/0 * * * ? *)', 'minutes field: "0/0" has step 0: a step (/n) is a positive whole number'],
    ['cron(0 */0 * * ? *)', 'hours field: "*/0" has step 0'],
    ['cron(0 5-1 * * ? *)', 'hours field: "5-1" runs from 5 down to 1'],
    ['cron(0 9 ? * FRI-MON *)', 'day-of-week field: "FRI-MON" runs from 6 down to 2'],
    ['cron(0/90 * * * ? *)', 'minutes field: "0/90" has step 90: a step is at most 59 in the minutes field'],
    ['cron(0 9 ? * 2/2 *)', 'day-of-week field "2/2" is not allowed there: the day-of-week field takes'],
    ['cron(1-2-3 * * * ? *)', 'minutes field: "1-2-3" is not a value, a range (a-b)'],
    ['cron(*/ * * * ? *)', 'minutes field: "*/" is not a value'],
  ])('%s names the field and the rule', (text, message) => {
    expect(() => parseScheduleExpression(text)).toThrow(ScheduleExpressionError);
    expect(() => parseScheduleExpression(text)).toThrow(message);
    // The local Scheduler and the CLI evaluate through nextFirings: the same error there.
    expect(() => nextFirings(text, { after, count: 1 })).toThrow(message);
  });

  it('any string either parses and evaluates, or is refused with a ScheduleExpressionError', () => {
    const token = fc.constantFrom(
      '*',
      '?',
      'L',
      'W',
      'LW',
      '#',
      '/',
      '-',
      ',',
      '0',
      '1',
      '5',
      '7',
      '12',
      '23',
      '31',
      '59',
      '60',
      '99',
      '1970',
      '2199',
      'JAN',
      'DEC',
      'MON',
      'FRI',
      '3#2',
      '6L',
      '15W',
      '0/0',
      '*/0',
      '5-1',
    );
    const field = fc.array(token, { minLength: 1, maxLength: 4 }).map((parts) => parts.join(''));
    const cron = fc.array(field, { minLength: 5, maxLength: 7 }).map((fs) => `cron(${fs.join(' ')})`);
    fc.assert(
      fc.property(
        fc.oneof(
          cron,
          fc.string(),
          fc.string().map((s) => `cron(${s})`),
        ),
        (text) => {
          try {
            const parsed = parseScheduleExpression(text);
            nextFirings(parsed, { after, count: 2, timeZone: 'Europe/Berlin' });
          } catch (error) {
            expect(error).toBeInstanceOf(ScheduleExpressionError);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('what EventBridge would refuse at CreateSchedule is refused here, saying what to write', () => {
  it.each([
    ['cron(0 0 ? * SAT-SUN *)', 'to wrap around write SAT,SUN; for SUN through SAT write SUN-SAT'],
    ['cron(0 0 ? * 7-1 *)', 'to wrap around write 7,1; for 1 through 7 write 1-7'],
    ['cron(0 0 ? * FRI-MON *)', 'to wrap around write FRI-SAT,SUN-MON; for MON through FRI write MON-FRI'],
    ['cron(0 22-2 * * ? *)', 'to wrap around write 22-23,0-2; for 2 through 22 write 2-22'],
    ['cron(0 0 * DEC-JAN ? *)', 'to wrap around write DEC,JAN; for JAN through DEC write JAN-DEC'],
    ['cron(0 22-2/2 * * ? *)', 'write it as two ranges from low to high, e.g. 22-23/2,0-2/2'],
  ])('a wrap-around range %s names the list that means it', (text, hint) => {
    expect(() => parseScheduleExpression(text)).toThrow(hint);
  });

  it('each suggested wrap-around list is itself accepted, and fires on the values the range meant', () => {
    // SAT,SUN: every Saturday and Sunday (2026-12-05 is a Saturday).
    expect(iso(nextFirings('cron(0 0 ? * SAT,SUN *)', { after, count: 3 }))).toEqual([
      '2026-12-05T00:00:00.000Z',
      '2026-12-06T00:00:00.000Z',
      '2026-12-12T00:00:00.000Z',
    ]);
    for (const text of [
      'cron(0 0 ? * 7,1 *)',
      'cron(0 0 ? * FRI-SAT,SUN-MON *)',
      'cron(0 22-23,0-2 * * ? *)',
      'cron(0 0 * DEC,JAN ? *)',
      'cron(0 22-23/2,0-2/2 * * ? *)',
    ])
      expect(() => parseScheduleExpression(text)).not.toThrow();
  });

  it('a step (/n) is accepted exactly from 1 to one less than the number of values of its field, in every field that takes one', () => {
    const fieldsWithSteps = [
      { at: 0, values: 60, start: '0', other: ['0', '0', '*', '*', '?', '*'] },
      { at: 1, values: 24, start: '0', other: ['0', '0', '*', '*', '?', '*'] },
      { at: 2, values: 31, start: '1', other: ['0', '0', '*', '*', '?', '*'] },
      { at: 3, values: 12, start: '1', other: ['0', '0', '*', '*', '?', '*'] },
      { at: 5, values: 230, start: '2026', other: ['0', '0', '*', '*', '?', '*'] },
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...fieldsWithSteps),
        fc.integer({ min: 0, max: 300 }),
        fc.constantFrom('start', '*', 'range'),
        (field, step, form) => {
          const fields = [...field.other];
          const base = form === 'start' ? field.start : form === '*' ? '*' : `${field.start}-${field.start}`;
          fields[field.at] = `${base}/${step}`;
          const text = `cron(${fields.join(' ')})`;
          if (step >= 1 && step <= field.values - 1) {
            expect(() => parseScheduleExpression(text)).not.toThrow();
          } else {
            expect(() => parseScheduleExpression(text)).toThrow(ScheduleExpressionError);
            if (step > 0)
              expect(() => parseScheduleExpression(text)).toThrow(
                `a step is at most ${field.values - 1} in the`,
              );
          }
        },
      ),
      { numRuns: 400 },
    );
    // The two of the finding: 0/60 and 0/61 now say the same.
    for (const text of ['cron(0/60 * * * ? *)', 'cron(0/61 * * * ? *)'])
      expect(() => parseScheduleExpression(text)).toThrow(
        /has step 6[01]: a step is at most 59 in the minutes field \(0–59, 60 values\); step 6[01] would fire at 0 only, and EventBridge refuses such steps \(\*\/60 in minutes\): write 0$/,
      );
  });

  it('any expression spaced otherwise than with single spaces is refused, naming the single-spaced form, which is accepted', () => {
    const valid = fc.constantFrom(
      'cron(0 23 * * ? *)',
      'cron(0/15 8-17 ? * MON-FRI *)',
      'rate(5 minutes)',
      'rate(1 day)',
      'cron(0 9 ? * 2#1 2027)',
    );
    const blank = fc.constantFrom(' ', '  ', '\t', '\n', ' \t');
    fc.assert(
      fc.property(valid, blank, fc.nat(), (text, extra, at) => {
        // Widen one of its spaces, or add blank after '(', before ')' or around the expression.
        const spots = [...text.matchAll(/ /g)].map((m) => m.index);
        const where = [text.indexOf('(') + 1, text.length - 1, 0, text.length, ...spots];
        const spot = where[at % where.length] as number;
        const spaced = `${text.slice(0, spot)}${extra}${text.slice(spot)}`;
        expect(() => parseScheduleExpression(text)).not.toThrow();
        expect(() => parseScheduleExpression(spaced)).toThrow(
          `is not spaced as in AWS's examples, the form sqs-jobs checks and sends: one space between parts, none after '(' or before ')', nothing around the expression, no tab or line break: write ${text}`,
        );
      }),
      { numRuns: 300 },
    );
  });
});
