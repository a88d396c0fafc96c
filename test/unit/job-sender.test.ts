/**
 * `JobSender` (lib/client/job-sender.ts), what workers send their children through: it sends as
 * `JobClient` does (the client's own suites test that path through it) and refuses what only a
 * `JobClient` can do, a job sent for later, before sending anything. The worker's children never
 * carry a time (`ctx.enqueue` and batch children take `partitionKey` and `delaySeconds` only);
 * this is what an entry built by hand with one gets.
 */
import type { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JobClientError } from '../../lib/client/job-client-error.ts';
import { JobSender } from '../../lib/client/job-sender.ts';
import { parseEnvelope } from '../../lib/core/envelope.ts';
import { defineJob } from '../../lib/runtime/job.ts';

const notify = defineJob({
  type: 'booking.notify',
  queue: 'booking',
  schema: z.object({ bookingId: z.string() }),
  run: async () => {},
});

/** SQS that takes every entry and keeps the bodies it was sent. */
class AcceptingSqs {
  readonly bodies: string[] = [];
  async send(command: SendMessageBatchCommand): Promise<unknown> {
    const entries = command.input.Entries ?? [];
    this.bodies.push(...entries.map((e) => e.MessageBody ?? ''));
    return { Successful: entries.map((e) => ({ Id: e.Id, MessageId: `m-${this.bodies.length}` })) };
  }
}

function sender(sqs: AcceptingSqs): JobSender {
  return new JobSender({
    source: '/services/worker',
    queueUrls: { booking: 'https://sqs.eu-west-1.amazonaws.com/123456789012/booking' },
    sqs,
  });
}

describe('JobSender', () => {
  it('sends jobs that go now, as JobClient does', async () => {
    const sqs = new AcceptingSqs();
    const result = await sender(sqs).sendBatch([
      { job: notify, data: { bookingId: 'b-1' }, options: { id: 'child-1', delaySeconds: 30 } },
    ]);
    expect(result).toEqual({
      sent: [{ index: 0, id: 'child-1', messageId: 'm-1', queue: 'booking' }],
      failed: [],
    });
    expect(parseEnvelope(sqs.bodies[0] ?? '')).toMatchObject({
      source: '/services/worker',
      id: 'child-1',
      type: 'booking.notify',
      data: { bookingId: 'b-1' },
    });
  });

  it('refuses a job sent for later with MissingScheduling, sending nothing of the batch', async () => {
    const sqs = new AcceptingSqs();
    const sending = sender(sqs).sendBatch([
      { job: notify, data: { bookingId: 'b-1' } },
      { job: notify, data: { bookingId: 'b-2' }, options: { delayMs: 3_600_000 } },
    ]);
    await expect(sending).rejects.toBeInstanceOf(JobClientError);
    await expect(sending).rejects.toMatchObject({
      code: 'MissingScheduling',
      senderFault: true,
      message: expect.stringContaining(
        'entry 1 (booking.notify): runAt/delayMs: a job sent for later needs a JobClient with scheduling',
      ),
    });
    expect(sqs.bodies).toEqual([]);
  });

  it('checks the options a worker gives it, source and queueUrls, as JobClient does (InvalidOptions, every problem named)', () => {
    expect(
      () => new JobSender({ source: '', queueUrls: { booking: 'not a url' }, sqs: new AcceptingSqs() }),
    ).toThrow(
      /invalid JobClient options: source must be a non-empty string; queueUrls\.booking must be an http\(s\) queue URL/,
    );
  });
});
