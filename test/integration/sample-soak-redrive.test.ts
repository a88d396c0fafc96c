/**
 * The soak's operator step (lib/sample/workload/soak-redrive.ts) on the embedded SQS emulator
 * (fauxqs): through the product's redrive (lib/ops/redrive), the soak completion jobs whose HTTP
 * 400 the fake mail API confirms it injected go back to their queue, body unchanged, and leave the
 * DLQ; every other dead letter stays in the DLQ, visible.
 */
import { type MessageAttributeValue, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEnvelope } from '../../lib/core/envelope.ts';
import { redriveRefusedSoakCompletions } from '../../lib/sample/workload/soak-redrive.ts';
import { type EmulatedQueue, type EmulatedSqs, startEmulatedSqs } from '../factories/emulated-sqs.ts';

let emulator: EmulatedSqs;

beforeAll(async () => {
  emulator = await startEmulatedSqs();
});

afterAll(async () => {
  await emulator?.stop();
});

/** Puts a dead letter into `dlq` with the evidence attributes the worker writes; returns its body. */
async function deadLetter(
  dlq: EmulatedQueue,
  type: string,
  id: string,
  data: object,
  reason: string,
): Promise<string> {
  const body = JSON.stringify(createEnvelope({ type, source: '/soak', id, data }));
  const text = (value: string): MessageAttributeValue => ({ DataType: 'String', StringValue: value });
  await emulator.sqs.send(
    new SendMessageCommand({
      QueueUrl: dlq.url,
      MessageBody: body,
      MessageAttributes: {
        JobType: text(type),
        ErrorReason: text(reason),
        ErrorName: text(reason === 'HTTP 400' ? 'ExternalApiError' : 'PermanentError'),
      },
    }),
  );
  return body;
}

describe('the soak redrive of completion jobs refused by an injected API 400', () => {
  it('moves only those back to their queue and leaves every other dead letter in the DLQ', async () => {
    const { queue, dlq } = await emulator.createQueuePair('notifications', false);
    const refused = await deadLetter(dlq, 'soak.batch-summary', 'done-k', { batchKey: 'k' }, 'HTTP 400');
    // A 400 the mail API did not inject, and a child that fails on purpose: not redriven.
    await deadLetter(dlq, 'soak.batch-summary', 'done-j', { batchKey: 'j' }, 'HTTP 400');
    await deadLetter(
      dlq,
      'soak.batch-child',
      'child-k-1',
      { batchKey: 'k', index: 1, fail: true, nest: 0 },
      'PermanentError',
    );

    const round = await redriveRefusedSoakCompletions(
      { sqs: emulator.sqs, queueUrls: { notifications: queue.url }, dlqUrls: { notifications: dlq.url } },
      {
        'email:batch-k:soak-batch-summary': ['badRequest'],
        'email:batch-j:soak-batch-summary': ['timeout'],
      },
    );

    expect(round).toEqual({ moved: ['k'], problems: [] });
    const inQueue = await emulator.receiveWithin(queue, 5_000);
    expect(inQueue.map((m) => m.Body)).toEqual([refused]);
    // The others are visible again in the DLQ at once (the redrive released what it held).
    const left = await emulator.receive(dlq);
    expect(left.map((m) => JSON.parse(m.Body ?? '{}').id).sort()).toEqual(['child-k-1', 'done-j']);
  });
});
