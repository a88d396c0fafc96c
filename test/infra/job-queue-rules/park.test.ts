/** Rule group `park`: jobs that park their FIFO group need the idempotency table and a FIFO queue. */
import { describe, expect, it } from 'vitest';
import { parkRule } from '../../../lib/constructs/job-queue/rules/park.ts';
import { errors, warnings } from './helpers.ts';

const job = (type: string, onDeadLetter?: string) => ({
  type,
  queue: 'jobs',
  retry: { maxAttempts: 3 },
  timeoutSeconds: 5,
  ...(onDeadLetter === undefined ? {} : { onDeadLetter }),
});

describe('park rule', () => {
  it('says nothing when no job parks', () => {
    expect(errors(parkRule, { jobs: [job('a'), job('b', 'continue')] })).toEqual([]);
    expect(warnings(parkRule, { jobs: [job('a', 'continue')] })).toEqual([]);
  });

  it('refuses parking jobs without the idempotency table, naming them', () => {
    expect(
      errors(parkRule, { fifo: true, idempotencyTable: false, jobs: [job('a', 'park'), job('b')] }),
    ).toEqual([
      "idempotencyTable: false, but jobs a park their group on a dead letter (onDeadLetter: 'park'), which is kept in the idempotency table: pass the table, or use onDeadLetter: 'continue'",
    ]);
  });

  it('warns when a parking job is on a standard queue (no groups to park)', () => {
    const [line, ...rest] = warnings(parkRule, { fifo: false, jobs: [job('a', 'park')] });
    expect(rest).toEqual([]);
    expect(line).toMatch(/^sqs-jobs:parkOnStandardQueue: jobs a ask to park/);
    expect(warnings(parkRule, { fifo: true, jobs: [job('a', 'park')] })).toEqual([]);
  });

  it("takes the queue's onDeadLetter 'park' (the entry's default) as parking, and refuses other values", () => {
    expect(
      errors(parkRule, {
        fifo: true,
        idempotencyTable: false,
        onDeadLetter: 'park',
        jobs: [job('a', 'park')],
      }),
    ).toEqual([
      "idempotencyTable: false, but onDeadLetter 'park' (the worker's default) and jobs a park their group on a dead letter (onDeadLetter: 'park'), which is kept in the idempotency table: pass the table, or use onDeadLetter: 'continue'",
    ]);
    const [line, ...rest] = warnings(parkRule, { fifo: false, onDeadLetter: 'park' });
    expect(rest).toEqual([]);
    expect(line).toMatch(
      /^sqs-jobs:parkOnStandardQueue: onDeadLetter 'park' \(the worker's default\) ask to park/,
    );
    expect(errors(parkRule, { fifo: true, onDeadLetter: 'Park' as 'park' })).toEqual([
      `onDeadLetter: "Park" is neither 'continue' nor 'park'`,
    ]);
    expect(errors(parkRule, { fifo: true, idempotencyTable: false, onDeadLetter: 'continue' })).toEqual([]);
  });
});
