/** All JobQueue rules together (`checkJobQueue`): order, and silence on a valid queue. */
import { describe, expect, it } from 'vitest';
import { checkJobQueue } from '../../../lib/constructs/job-queue/rules/index.ts';
import { props } from './helpers.ts';

describe('checkJobQueue', () => {
  it('finds nothing on a valid queue', () => {
    const check = checkJobQueue(props());
    expect(check.errors).toEqual([]);
    expect(check.warnings).toEqual([]);
  });

  it('reports the problems of several groups in rule order, one line each', () => {
    const check = checkJobQueue(
      props({ name: undefined, batchSize: 0, idempotencyTable: undefined, maxMessageSizeBytes: 10 }),
    );
    expect(check.errors.map((e) => e.split(':')[0])).toEqual([
      'name',
      'batchSize',
      'maxMessageSizeBytes',
      'idempotencyTable',
    ]);
  });

  it('a JavaScript caller passing no props gets one line per required prop and nothing else', () => {
    const check = checkJobQueue({} as never);
    expect(check.errors.map((e) => e.split(':')[0])).toEqual([
      'name',
      'entry',
      'maxAttempts',
      'jobTimeoutSeconds',
      'idempotencyTable',
    ]);
    for (const e of check.errors) expect(e).toMatch(/^\w+: required/);
  });
});
