/** Rule group `fifo`: high-throughput FIFO settings [high-throughput-fifo]. */
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { fifoRule } from '../../../lib/constructs/job-queue/rules/fifo.ts';
import { errors } from './helpers.ts';

const highThroughput = {
  deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP,
  fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
};

describe('fifo rule', () => {
  it('accepts high-throughput FIFO', () => {
    expect(errors(fifoRule, { fifo: true, ...highThroughput })).toEqual([]);
  });

  it('refuses the settings on a standard queue', () => {
    expect(errors(fifoRule, highThroughput)).toEqual([
      'deduplicationScope: only FIFO queues have a deduplication scope',
      'fifoThroughputLimit: only FIFO queues have a throughput limit',
    ]);
  });

  it('refuses perMessageGroupId without deduplicationScope messageGroup', () => {
    expect(
      errors(fifoRule, { fifo: true, fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID }),
    ).toEqual([
      'fifoThroughputLimit: perMessageGroupId requires deduplicationScope messageGroup [high-throughput-fifo]',
    ]);
  });
});
