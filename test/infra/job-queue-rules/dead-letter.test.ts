/** Rule group `dead-letter`: the DLQ's kind. */
import { App, Stack } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { deadLetterRule } from '../../../lib/constructs/job-queue/rules/dead-letter.ts';
import { errors } from './helpers.ts';

describe('dead-letter rule', () => {
  const stack = new Stack(new App(), 'Rules');
  const standard = new sqs.Queue(stack, 'Standard');
  const fifo = new sqs.Queue(stack, 'Fifo', { fifo: true });

  it('accepts a DLQ of the same kind, or none', () => {
    expect(errors(deadLetterRule, { deadLetterQueue: standard })).toEqual([]);
    expect(errors(deadLetterRule, { fifo: true, deadLetterQueue: fifo })).toEqual([]);
    expect(errors(deadLetterRule, { fifo: true })).toEqual([]);
  });

  it('refuses a DLQ of the other kind', () => {
    expect(errors(deadLetterRule, { fifo: true, deadLetterQueue: standard })).toEqual([
      'deadLetterQueue: a FIFO queue needs a FIFO dead-letter queue, but the given one is standard [sqs-dead-letter-queues]',
    ]);
    expect(errors(deadLetterRule, { deadLetterQueue: fifo })).toEqual([
      'deadLetterQueue: a standard queue needs a standard dead-letter queue, but the given one is FIFO [sqs-dead-letter-queues]',
    ]);
  });
});
