/**
 * Rule group `dead-letter-retention`: on a standard queue the DLQ must keep messages longer than
 * the queue, because a message moved by the redrive policy keeps its first enqueue time.
 */
import { App, CfnParameter, Duration, Stack } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { deadLetterRetentionRule } from '../../../lib/constructs/job-queue/rules/dead-letter-retention.ts';
import { errors, warnings } from './helpers.ts';

describe('dead-letter-retention rule', () => {
  const stack = new Stack(new App(), 'Rules');
  const sqsDefault = new sqs.Queue(stack, 'SqsDefaultRetention'); // SQS default: 4 days
  const twoWeeks = new sqs.Queue(stack, 'TwoWeeks', { retentionPeriod: Duration.days(14) });
  const oneWeek = new sqs.Queue(stack, 'OneWeek', { retentionPeriod: Duration.days(7) });
  const fifoDlq = new sqs.Queue(stack, 'FifoDlq', { fifo: true });
  const imported = sqs.Queue.fromQueueArn(
    stack,
    'Imported',
    'arn:aws:sqs:eu-west-1:123456789012:elsewhere-dlq',
  );
  const tokenRetention = new sqs.Queue(stack, 'TokenRetention', {
    retentionPeriod: Duration.seconds(new CfnParameter(stack, 'Retention', { type: 'Number' }).valueAsNumber),
  });

  it('accepts the defaults (queue 4 days, its own DLQ 14 days) and a queue kept up to just under 14 days', () => {
    expect(errors(deadLetterRetentionRule)).toEqual([]);
    expect(errors(deadLetterRetentionRule, { retentionPeriod: Duration.days(13) })).toEqual([]);
    expect(warnings(deadLetterRetentionRule)).toEqual([]);
  });

  it('refuses a queue kept as long as its own DLQ (14 days)', () => {
    expect(errors(deadLetterRetentionRule, { retentionPeriod: Duration.days(14) })).toEqual([
      "retentionPeriod: 14 days is not shorter than the dead-letter queue's 14 days: a message SQS moves to the DLQ keeps its first enqueue time, so it could expire there on arrival; keep retentionPeriod below 14 days [setting-up-dead-letter-queue-retention]",
    ]);
  });

  it('refuses a given DLQ that keeps messages no longer than the queue, reading its retention', () => {
    expect(errors(deadLetterRetentionRule, { deadLetterQueue: sqsDefault })).toEqual([
      "deadLetterQueue: keeps messages 4 days (the SQS default), not longer than this queue's retentionPeriod of 4 days: a message SQS moves to the DLQ keeps its first enqueue time, so it could expire there on arrival; give the DLQ a longer retentionPeriod (14 days is the maximum) [setting-up-dead-letter-queue-retention]",
    ]);
    expect(
      errors(deadLetterRetentionRule, { deadLetterQueue: oneWeek, retentionPeriod: Duration.days(7) }),
    ).toEqual([
      expect.stringMatching(/^deadLetterQueue: keeps messages 7 days, not longer than .* 7 days: /),
    ]);
  });

  it('accepts a given DLQ that keeps messages longer than the queue', () => {
    expect(errors(deadLetterRetentionRule, { deadLetterQueue: twoWeeks })).toEqual([]);
    expect(
      errors(deadLetterRetentionRule, { deadLetterQueue: oneWeek, retentionPeriod: Duration.days(6) }),
    ).toEqual([]);
  });

  it('warns (does not refuse) when the DLQ is imported or its retention is a token: it cannot be read', () => {
    for (const deadLetterQueue of [imported, tokenRetention]) {
      expect(errors(deadLetterRetentionRule, { deadLetterQueue })).toEqual([]);
      expect(warnings(deadLetterRetentionRule, { deadLetterQueue })).toEqual([
        "sqs-jobs:deadLetterRetentionUnknown: deadLetterQueue: its retention period cannot be read at synth (an imported queue or a token): make sure it keeps messages longer than this queue's retentionPeriod of 4 days, or messages SQS moves there can expire on arrival [setting-up-dead-letter-queue-retention]",
      ]);
    }
  });

  it('says nothing on FIFO queues: SQS resets the enqueue time when it moves a FIFO message to the DLQ', () => {
    expect(errors(deadLetterRetentionRule, { fifo: true, retentionPeriod: Duration.days(14) })).toEqual([]);
    expect(
      errors(deadLetterRetentionRule, {
        fifo: true,
        deadLetterQueue: fifoDlq,
        retentionPeriod: Duration.days(10),
      }),
    ).toEqual([]);
  });

  it('says nothing when the queue retention is a token', () => {
    const retentionPeriod = Duration.seconds(
      new CfnParameter(stack, 'QueueRetention', { type: 'Number' }).valueAsNumber,
    );
    expect(errors(deadLetterRetentionRule, { retentionPeriod })).toEqual([]);
    expect(warnings(deadLetterRetentionRule, { retentionPeriod })).toEqual([]);
  });
});
