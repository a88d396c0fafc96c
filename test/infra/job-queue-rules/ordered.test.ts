/** Rule group `ordered`: a job that needs order per key is refused on a standard queue. */
import { describe, expect, it } from 'vitest';
import { orderedRule } from '../../../lib/constructs/job-queue/rules/ordered.ts';
import { errors } from './helpers.ts';

const job = (type: string, ordered?: boolean) => ({
  type,
  queue: 'jobs',
  retry: { maxAttempts: 3 },
  timeoutSeconds: 5,
  ...(ordered === undefined ? {} : { ordered }),
});

describe('ordered rule', () => {
  it('refuses ordered jobs on a standard queue, naming them and the fix', () => {
    expect(
      errors(orderedRule, {
        fifo: false,
        jobs: [job('booking.confirm', true), job('emails.send'), job('booking.invoice', true)],
      }),
    ).toEqual([
      'jobs booking.confirm, booking.invoice need order per key (ordered: true), but this is a standard queue (fifo: false), where SQS keeps no order and the worker dead-letters their messages (OrderedJobWithoutGroupError): make the queue FIFO (fifo: true, jobs sent with a partitionKey), or drop ordered: true from jobs that do not depend on order',
    ]);
    // fifo left out is a standard queue too.
    expect(errors(orderedRule, { jobs: [job('a', true)] })).toHaveLength(1);
  });

  it('accepts ordered jobs on a FIFO queue, and jobs without order anywhere', () => {
    expect(errors(orderedRule, { fifo: true, jobs: [job('a', true)] })).toEqual([]);
    expect(errors(orderedRule, { fifo: false, jobs: [job('a'), job('b', false)] })).toEqual([]);
    expect(errors(orderedRule, { fifo: false })).toEqual([]);
  });
});
