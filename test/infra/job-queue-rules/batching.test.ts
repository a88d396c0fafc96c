/** Rule group `batching`: batch size and batching window [services-sqs-parameters]. */
import { Duration } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { batchingRule } from '../../../lib/constructs/job-queue/rules/batching.ts';
import { errors } from './helpers.ts';

describe('batching rule', () => {
  it('accepts the limits themselves', () => {
    expect(errors(batchingRule, { fifo: true, batchSize: 10 })).toEqual([]);
    expect(errors(batchingRule, { batchSize: 10 })).toEqual([]);
    expect(errors(batchingRule, { batchSize: 11, maxBatchingWindow: Duration.seconds(1) })).toEqual([]);
    expect(errors(batchingRule, { batchSize: 10_000, maxBatchingWindow: Duration.minutes(5) })).toEqual([]);
  });

  it('refuses batch sizes beyond the FIFO and standard limits', () => {
    expect(errors(batchingRule, { fifo: true, batchSize: 11 })).toEqual([
      'batchSize: 11 is above 10, the maximum for a FIFO queue [services-sqs-parameters]',
    ]);
    expect(errors(batchingRule, { batchSize: 10_001, maxBatchingWindow: Duration.seconds(5) })).toEqual([
      'batchSize: 10001 is above 10000, the maximum for a standard queue [services-sqs-parameters]',
    ]);
    expect(errors(batchingRule, { batchSize: 0 })).toEqual([
      'batchSize: 0 must be a whole number of at least 1',
    ]);
  });

  it('refuses more than 10 records on a standard queue without a window of at least 1 s', () => {
    const needsWindow =
      'batchSize: 50 is above 10, which needs a maxBatchingWindow of at least 1 second [services-sqs-parameters]';
    expect(errors(batchingRule, { batchSize: 50 })).toEqual([needsWindow]);
    expect(errors(batchingRule, { batchSize: 50, maxBatchingWindow: Duration.millis(500) })).toEqual([
      needsWindow,
    ]);
  });

  it('refuses a window on FIFO and a window above 5 minutes', () => {
    expect(errors(batchingRule, { fifo: true, maxBatchingWindow: Duration.seconds(1) })).toEqual([
      'maxBatchingWindow: FIFO queues do not support a batching window [services-sqs-parameters]',
    ]);
    expect(errors(batchingRule, { maxBatchingWindow: Duration.seconds(301) })).toEqual([
      'maxBatchingWindow: 301 s is above 300 s, the Lambda maximum [services-sqs-parameters]',
    ]);
  });
});
