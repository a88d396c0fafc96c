/**
 * One DynamoDB client per JobClient: the `dynamodb` option is what every path that touches the
 * idempotency table uses (a job sent for later, cancel, reschedule, startBatch's batch item), and
 * what a user writes wrongly there (the client under `batches`, a client without `send`) is
 * refused at construction, the problem listed in the error's `problems` as well as its message.
 */
import type { SendMessageBatchCommand, SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JobClient, type JobClientOptions } from '../../lib/client/job-client.ts';
import { JobClientError } from '../../lib/client/job-client-error.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { FakeDynamoTable, FakeScheduler } from '../factories/fake-scheduler.ts';

const run = async (): Promise<void> => {};
const child = defineJob({ type: 'billing.invoice', queue: 'work', schema: z.object({ n: z.number() }), run });
const summary = defineJob({ type: 'billing.summary', queue: 'work', schema: z.object({}), run });
const URLS = { work: 'https://sqs.eu-west-1.amazonaws.com/123456789012/work' };
const TABLE = 'jobs-idempotency';

/** SQS that takes every entry and keeps what it was sent. */
class AcceptingSqs {
  readonly entries: SendMessageBatchRequestEntry[] = [];
  async send(command: SendMessageBatchCommand): Promise<unknown> {
    const entries = command.input.Entries ?? [];
    this.entries.push(...entries);
    return { Successful: entries.map((e) => ({ Id: e.Id, MessageId: `m-${this.entries.length}` })) };
  }
}

function refusal(options: unknown): JobClientError {
  try {
    new JobClient(options as JobClientOptions);
  } catch (error) {
    if (error instanceof JobClientError) return error;
    throw error;
  }
  throw new Error('the options were accepted');
}

describe('the dynamodb option of JobClient', () => {
  it('is the one client of jobs sent for later, cancel and startBatch', async () => {
    const dynamodb = new FakeDynamoTable();
    const sqs = new AcceptingSqs();
    const client = new JobClient({
      source: '/producer',
      queueUrls: URLS,
      sqs,
      scheduler: new FakeScheduler(),
      dynamodb,
      scheduling: { idempotencyTableName: TABLE, queues: {} },
      batches: { tableName: TABLE },
    });

    await client.send(child, { n: 0 }, { id: 'later-1', delayMs: 60_000 });
    await expect(client.cancel({ queue: 'work', id: 'later-1' })).resolves.toMatchObject({
      status: 'cancelled',
    });
    const started = await client.startBatch({
      id: 'nightly-1',
      children: [0, 1, 2].map((n) => ({ job: child, data: { n } })),
      completion: { job: summary, data: {} },
    });

    expect(started).toEqual({ batchId: 'nightly-1', total: 3, created: true });
    // The batch item went to the client given at the top level, on the batches table.
    const batchWrites = dynamodb.calls.filter(
      (call) => call.name === 'PutItemCommand' && String(call.input.Item.pk.S).includes('nightly-1'),
    );
    expect(batchWrites).toHaveLength(1);
    expect(batchWrites[0]!.input.TableName).toBe(TABLE);
    // The state item (send for later), cancelled, is on the same client.
    const states = [...dynamodb.items.values()].filter((item) => item.state?.S === 'cancelled');
    expect(states).toHaveLength(1);
  });

  it('is refused under batches, pointing at the top-level option', () => {
    const error = refusal({
      source: '/p',
      queueUrls: URLS,
      batches: { tableName: TABLE, dynamodb: new FakeDynamoTable() },
    });
    expect(error.code).toBe('InvalidOptions');
    expect(error.message).toContain(
      'batches.dynamodb is not an option (known: tableName); did you mean the JobClient option dynamodb: new JobClient({ dynamodb, batches: { tableName } })?',
    );
  });

  it('refuses a client without send, a bad batches table, and lists each problem in problems', () => {
    const error = refusal({
      source: '/p',
      queueUrls: URLS,
      dynamodb: { region: 'eu-west-1' },
      scheduler: 'scheduler',
      batches: { tableName: 'x' },
    });
    expect(error.code).toBe('InvalidOptions');
    expect(error.problems.map((p) => p.message)).toEqual([
      `batches.tableName must be a DynamoDB table name (3-255 of a-z A-Z 0-9 _ . -), the workers' JOBS_IDEMPOTENCY_TABLE, got a string ("x")`,
      'scheduler must be an EventBridge Scheduler client (new SchedulerClient({})): an object with send(command), got a string ("scheduler")',
      'dynamodb must be a DynamoDB client (new DynamoDBClient({})): an object with send(command), got an object',
    ]);
    expect(error.message).toBe(
      `invalid JobClient options: ${error.problems.map((p) => p.message).join('; ')}`,
    );
  });

  it('lists what is wrong with a job identity given to cancel in problems', async () => {
    const client = new JobClient({ source: '/p', queueUrls: URLS });
    const error = await client.cancel({ queue: 'other', id: '' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(JobClientError);
    expect((error as JobClientError).problems.map((p) => p.message)).toEqual([
      'identity.queue must be a queue of queueUrls (known queues: work), got a string ("other")',
      `identity.id must be the job's envelope id (the id send returned), got a string ("")`,
    ]);
  });

  it('lists options that are not an object in problems too', () => {
    expect(refusal(undefined).problems.map((p) => p.message)).toEqual([
      'expected an object { source, queueUrls, ... }, got undefined',
    ]);
  });

  it('lists an unknown option in problems (never an error with no problem listed)', () => {
    const error = refusal({ source: '/p', queueUrls: URLS, region: 'eu-west-1' });
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]!.message).toMatch(
      /^region is not an option .*did you mean sqs: new SQSClient\(\{ region \}\)/,
    );
  });
});
