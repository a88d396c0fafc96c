/**
 * Jobs sent for later by `JobClient` (lib/client/scheduled-jobs.ts), against fake Scheduler and
 * DynamoDB clients: how each job travels (DelaySeconds within 15 minutes on a standard queue,
 * else a one-time schedule; FIFO always a schedule, with its MessageGroupId), the CreateSchedule
 * request, the deterministic name that keeps a retried send to one schedule, the errors a caller
 * sees, cancel and reschedule.
 */
import type { SendMessageBatchCommand, SendMessageBatchRequestEntry } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { JobClient, type JobClientOptions } from '../../lib/client/job-client.ts';
import { JobClientError } from '../../lib/client/job-client-error.ts';
import { schedulingFromEnv } from '../../lib/client/scheduling.ts';
import { parseEnvelope } from '../../lib/core/envelope.ts';
import { atExpressionOf } from '../../lib/core/schedule-expression.ts';
import { oneTimeScheduleName, scheduledJobKey } from '../../lib/core/scheduled-job.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { FakeDynamoTable, FakeScheduler } from '../factories/fake-scheduler.ts';

const run = async (): Promise<void> => {};
const expireHold = defineJob({
  type: 'booking.expire-hold',
  queue: 'holds',
  schema: z.object({ holdId: z.string() }),
  run,
});
const invoice = defineJob({
  type: 'billing.invoice',
  queue: 'billing',
  schema: z.object({ orderId: z.string() }),
  run,
});

const SOURCE = '/services/checkout';
const ROLE = 'arn:aws:iam::123456789012:role/holds-scheduler';
const URLS = {
  holds: 'https://sqs.eu-west-1.amazonaws.com/123456789012/holds',
  billing: 'https://sqs.eu-west-1.amazonaws.com/123456789012/billing.fifo',
};
const HOLDS_DLQ = 'arn:aws:sqs:eu-west-1:123456789012:holds-schedule-dlq';
const SCHEDULING = {
  idempotencyTableName: 'jobs-idempotency',
  queues: {
    holds: { groupName: 'app-holds', roleArn: ROLE, deadLetterQueueArn: HOLDS_DLQ },
    billing: { groupName: 'app-billing', roleArn: 'arn:aws:iam::123456789012:role/billing-scheduler' },
  },
};

/** SQS that takes every entry and keeps what it was sent. */
class AcceptingSqs {
  readonly entries: SendMessageBatchRequestEntry[] = [];
  async send(command: SendMessageBatchCommand): Promise<unknown> {
    const entries = command.input.Entries ?? [];
    this.entries.push(...entries);
    return { Successful: entries.map((e) => ({ Id: e.Id, MessageId: `m-${this.entries.length}` })) };
  }
}

function setup(overrides: Partial<JobClientOptions> = {}) {
  const sqs = new AcceptingSqs();
  const scheduler = new FakeScheduler();
  const dynamodb = new FakeDynamoTable();
  const client = new JobClient({
    source: SOURCE,
    queueUrls: URLS,
    sqs,
    scheduler,
    dynamodb,
    scheduling: SCHEDULING,
    ...overrides,
  });
  return { client, sqs, scheduler, dynamodb };
}

const HOUR_MS = 3_600_000;

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('sending a job for later', () => {
  it('within 15 minutes on a standard queue: writes the state item, then one SQS message with DelaySeconds; no schedule', async () => {
    const { client, sqs, scheduler, dynamodb } = setup();
    const before = Date.now();
    const result = await client.send(expireHold, { holdId: 'h-1' }, { id: 'hold-h-1', delayMs: 90_000 });

    expect(result).toMatchObject({ id: 'hold-h-1', queue: 'holds', via: 'delay' });
    expect(result.messageId).not.toBe('');
    expect(sqs.entries).toHaveLength(1);
    const entry = sqs.entries[0]!;
    // The delay counts down from the due time while the send runs: on a busy machine the state
    // item's write can take seconds, so the bound is the due time as seen after the send.
    const elapsedSeconds = Math.ceil((Date.now() - before) / 1000);
    expect(entry.DelaySeconds).toBeGreaterThanOrEqual(90 - elapsedSeconds);
    expect(entry.DelaySeconds).toBeLessThanOrEqual(91);
    const envelope = parseEnvelope(entry.MessageBody!);
    expect(envelope.schedulegeneration).toBe('1');
    expect(Date.parse(envelope.runat!)).toBeGreaterThanOrEqual(before + 90_000);
    expect(result.runAt).toBe(envelope.runat);
    expect(scheduler.calls).toEqual([]);
    // The state item was written before the message: PutItem, then nothing else on the table.
    expect(dynamodb.calls.map((c) => c.name)).toEqual(['PutItemCommand']);
    const item = dynamodb.items.get(scheduledJobKey(SOURCE, 'hold-h-1'))!;
    expect(item).toMatchObject({
      state: { S: 'pending' },
      generation: { N: '1' },
      via: { S: 'delay' },
      queue: { S: 'holds' },
      type: { S: 'booking.expire-hold' },
      body: { S: entry.MessageBody },
    });
    expect(item.scheduleName).toBeUndefined();
  });

  it('beyond 15 minutes: one CreateSchedule of the templated SQS target, named by the job, deleting itself after firing', async () => {
    const { client, sqs, scheduler } = setup();
    const runAt = new Date(Date.now() + 2 * HOUR_MS + 250);
    const result = await client.send(expireHold, { holdId: 'h-2' }, { id: 'hold-h-2', runAt });

    const name = oneTimeScheduleName(SOURCE, 'hold-h-2');
    expect(name).toMatch(/^sj-[0-9a-f]{56}$/);
    expect(result).toMatchObject({ id: 'hold-h-2', via: 'schedule', scheduleName: name, messageId: '' });
    expect(sqs.entries).toEqual([]);
    const [create] = scheduler.callsOf('CreateScheduleCommand');
    const envelope = parseEnvelope(create!.input.Target.Input);
    expect(create!.input).toEqual({
      Name: name,
      GroupName: 'app-holds',
      ClientToken: name,
      ScheduleExpression: atExpressionOf(runAt),
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      State: 'ENABLED',
      Description: 'sqs-jobs booking.expire-hold hold-h-2',
      Target: {
        Arn: 'arn:aws:sqs:eu-west-1:123456789012:holds',
        RoleArn: ROLE,
        Input: create!.input.Target.Input,
        DeadLetterConfig: { Arn: HOLDS_DLQ },
      },
    });
    // at() has whole seconds: rounded up, never early.
    expect(create!.input.ScheduleExpression).toBe(
      `at(${new Date(Math.ceil(runAt.getTime() / 1000) * 1000).toISOString().slice(0, 19)})`,
    );
    expect(envelope).toMatchObject({ id: 'hold-h-2', runat: runAt.toISOString(), schedulegeneration: '1' });
  });

  it('on a FIFO queue, even a few seconds ahead: a schedule whose target keeps the MessageGroupId', async () => {
    const { client, sqs, scheduler } = setup();
    await client.send(invoice, { orderId: 'o-1' }, { id: 'inv-o-1', partitionKey: 'user-7', delayMs: 5_000 });

    expect(sqs.entries).toEqual([]);
    const [create] = scheduler.callsOf('CreateScheduleCommand');
    expect(create!.input.GroupName).toBe('app-billing');
    expect(create!.input.Target).toMatchObject({
      Arn: 'arn:aws:sqs:eu-west-1:123456789012:billing.fifo',
      SqsParameters: { MessageGroupId: 'user-7' },
    });
  });

  it('a send retried after a lost CreateSchedule response makes one schedule, with the first message', async () => {
    const { client, scheduler } = setup({ retry: { maxAttempts: 1 } });
    scheduler.loseResponseOf.push('CreateScheduleCommand');
    const runAt = new Date(Date.now() + 3 * HOUR_MS).toISOString();
    const send = () => client.send(expireHold, { holdId: 'h-3' }, { id: 'hold-h-3', runAt });

    await expect(send()).rejects.toMatchObject({ code: 'ECONNRESET', senderFault: false });
    const retried = await send();

    expect(retried.via).toBe('schedule');
    expect(scheduler.schedules.size).toBe(1);
    const creates = scheduler.callsOf('CreateScheduleCommand');
    expect(creates).toHaveLength(2);
    expect(creates[1]!.input.Name).toBe(creates[0]!.input.Name);
    expect(creates[1]!.input.ClientToken).toBe(creates[0]!.input.ClientToken);
    // The retry sent the stored message (the first try's trace id), so the schedule is the same job.
    expect(creates[1]!.input.Target.Input).toBe(creates[0]!.input.Target.Input);
  });

  it('a send with delayMs retried a moment later is the same job: its first time and message are kept', async () => {
    const { client, scheduler, sqs } = setup();
    const first = await client.send(
      expireHold,
      { holdId: 'h-3b' },
      { id: 'hold-h-3b', delayMs: 2 * HOUR_MS },
    );
    const again = await client.send(
      expireHold,
      { holdId: 'h-3b' },
      { id: 'hold-h-3b', delayMs: 2 * HOUR_MS },
    );
    expect(again.runAt).toBe(first.runAt);
    expect(scheduler.schedules.size).toBe(1);
    const short = await client.send(expireHold, { holdId: 'h-3c' }, { id: 'hold-h-3c', delayMs: 60_000 });
    const shortAgain = await client.send(
      expireHold,
      { holdId: 'h-3c' },
      { id: 'hold-h-3c', delayMs: 60_000 },
    );
    expect(shortAgain.runAt).toBe(short.runAt);
    // Two messages of generation 1 (the first try's may have been taken): the worker runs one.
    expect(sqs.entries.map((e) => e.MessageBody)).toEqual([
      sqs.entries[0]!.MessageBody,
      sqs.entries[0]!.MessageBody,
    ]);
  });

  it('the same id and time with other data is refused (not taken for a retry), and the first data is kept', async () => {
    const { client, scheduler } = setup();
    const runAt = new Date(Date.now() + 2 * HOUR_MS);
    await client.send(expireHold, { holdId: 'h-5' }, { id: 'hold-h-5', runAt });
    const error = await client
      .send(expireHold, { holdId: 'h-OTHER' }, { id: 'hold-h-5', runAt })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobClientError);
    expect(error).toMatchObject({ code: 'AlreadyScheduled', senderFault: true });
    expect((error as Error).message).toMatch(
      /with other data or partition key: a retried send must carry the same message/,
    );
    const [stored] = [...scheduler.schedules.values()];
    expect(parseEnvelope(stored.Target.Input).data).toEqual({ holdId: 'h-5' });
    expect(scheduler.callsOf('CreateScheduleCommand')).toHaveLength(1);
  });

  it('a retried send whose data has the same values in another key order is the same job (one schedule, not AlreadyScheduled)', async () => {
    const { client, scheduler } = setup();
    const runAt = new Date(Date.now() + 2 * HOUR_MS);
    const reminder = defineJob({
      type: 'booking.hold-reminder',
      queue: 'holds',
      schema: z.object({ holdId: z.string(), limits: z.object({ minutes: z.number(), times: z.number() }) }),
      run,
    });
    const first = await client.send(
      reminder,
      { holdId: 'h-6', limits: { minutes: 5, times: 2 } },
      { id: 'hold-h-6', runAt },
    );
    const again = await client.send(
      reminder,
      { limits: { times: 2, minutes: 5 }, holdId: 'h-6' },
      { id: 'hold-h-6', runAt },
    );
    expect(again.id).toBe(first.id);
    expect(scheduler.schedules.size).toBe(1);
  });

  it('a CreateSchedule refused for good (no such group) leaves nothing pending: the error names the group and what to do; a send after the fix goes', async () => {
    const fake = new FakeScheduler();
    let groupExists = false;
    const scheduler = {
      // biome-ignore lint/suspicious/noExplicitAny: any Scheduler command.
      send: async (command: any) => {
        if (!groupExists && command.constructor.name === 'CreateScheduleCommand')
          throw Object.assign(new Error('Schedule group app-holds does not exist.'), {
            name: 'ResourceNotFoundException',
            $fault: 'client',
            $metadata: { httpStatusCode: 404 },
          });
        return fake.send(command);
      },
    };
    const { client } = setup({ scheduler });
    const runAt = new Date(Date.now() + 2 * HOUR_MS);
    const error = await client
      .send(expireHold, { holdId: 'h-g' }, { id: 'hold-h-g', runAt })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'ResourceNotFoundException', senderFault: true });
    expect((error as Error).message).toMatch(
      /job hold-h-g was not sent for later: CreateSchedule in group "app-holds" failed .*schedule group "app-holds" does not exist: deploy the JobQueue .*Nothing is pending: send it again once fixed/s,
    );
    // No phantom: the job is not pending (cancel finds nothing), and once the group exists the same send goes.
    expect(await client.cancel({ queue: 'holds', id: 'hold-h-g' })).toMatchObject({ status: 'not-found' });
    groupExists = true;
    const sent = await client.send(expireHold, { holdId: 'h-g' }, { id: 'hold-h-g', runAt });
    expect(sent).toMatchObject({ via: 'schedule' });
    expect(fake.schedules.size).toBe(1);
  });

  it('a transient CreateSchedule failure keeps the state item: the retried send finds it and makes the schedule', async () => {
    const { client, scheduler } = setup();
    scheduler.failBefore.push('CreateScheduleCommand');
    const runAt = new Date(Date.now() + 2 * HOUR_MS);
    await expect(client.send(expireHold, { holdId: 'h-t' }, { id: 'hold-h-t', runAt })).rejects.toMatchObject(
      {
        code: 'InternalServerException',
      },
    );
    const sent = await client.send(expireHold, { holdId: 'h-t' }, { id: 'hold-h-t', runAt });
    expect(sent).toMatchObject({ via: 'schedule' });
    expect(scheduler.schedules.size).toBe(1);
  });

  it('the same id sent for later at another time is refused: reschedule moves a job', async () => {
    const { client } = setup();
    await client.send(expireHold, { holdId: 'h-4' }, { id: 'hold-h-4', delayMs: 2 * HOUR_MS });
    const error = await client
      .send(expireHold, { holdId: 'h-4' }, { id: 'hold-h-4', delayMs: 5 * HOUR_MS })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobClientError);
    expect(error).toMatchObject({ code: 'AlreadyScheduled', senderFault: true });
    expect((error as Error).message).toMatch(/jobClient\.reschedule/);
  });

  it('a runAt in the past is due now: sent at once (DelaySeconds 0), still cancellable until it starts', async () => {
    const { client, sqs, scheduler, dynamodb } = setup();
    const result = await client.send(
      expireHold,
      { holdId: 'h-5' },
      { id: 'hold-h-5', runAt: '2020-01-01T00:00:00Z' },
    );
    expect(result.via).toBe('delay');
    expect(sqs.entries[0]!.DelaySeconds).toBe(0);
    expect(scheduler.calls).toEqual([]);
    expect(dynamodb.items.size).toBe(1);
    // Years in the past, its state still lives 14 days from now: the cancel finds it.
    await expect(client.cancel({ queue: 'holds', id: 'hold-h-5' })).resolves.toMatchObject({
      status: 'cancelled',
    });
  });

  it.each([
    [{ runAt: 'tomorrow' }, /options\.runAt must be a Date or an RFC 3339 time/],
    [{ runAt: '2026-12-24T18:00:00' }, /options\.runAt must be a Date or an RFC 3339 time with an offset/],
    [{ runAt: new Date(Number.NaN) }, /options\.runAt is an invalid Date/],
    [{ delayMs: -1 }, /options\.delayMs must be a number of milliseconds >= 0/],
    [{ delayMs: 400 * 24 * HOUR_MS }, /options\.delayMs is 34560000000 ms, more than 366 days/],
    [{ delayMs: 1e16 }, /options\.delayMs is 10000000000000000 ms, more than 366 days/],
    [{ runAt: '2027-02-30T00:00:00Z' }, /options\.runAt "2027-02-30T00:00:00Z" is not a real date and time/],
    [{ runAt: '2027-01-01T24:00:00Z' }, /is not a real date and time/],
    [{ runAt: '2027-01-01T23:60:00Z' }, /"2027-01-01T23:60:00Z" is not a real date and time/],
    // A leap second: said so, with the second to pass, never shifted silently.
    [
      { runAt: '2027-06-30T23:59:60Z' },
      /options\.runAt "2027-06-30T23:59:60Z" is a leap second \(:60\), which a JavaScript Date cannot represent \(ECMAScript time values count no leap seconds\), so no job can be due at it: pass 2027-07-01T00:00:00Z, the next second/,
    ],
    [
      { runAt: '2027-07-01T01:59:60.5+02:00' },
      /is a leap second \(:60\).*: pass 2027-07-01T00:00:00Z, the next second/,
    ],
    [{ runAt: new Date(Date.now() + 400 * 24 * HOUR_MS) }, /more than 366 days ahead/],
    [{ delayMs: 1000, runAt: new Date() }, /runAt and options\.delayMs are both given/],
    [{ delayMs: 1000, delaySeconds: 5 }, /delaySeconds cannot go with runAt or delayMs/],
  ])('refuses %o before anything is sent', async (options, message) => {
    const { client, sqs, scheduler, dynamodb } = setup();
    const error = await client.send(expireHold, { holdId: 'h' }, options).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'InvalidEntries', senderFault: true });
    expect((error as Error).message).toMatch(message);
    expect([sqs.entries, scheduler.calls, dynamodb.calls]).toEqual([[], [], []]);
  });

  it('without a table: MissingScheduling naming JOBS_IDEMPOTENCY_TABLE; nothing sent', async () => {
    const { client, sqs } = setup({ scheduling: undefined });
    const error = await client.send(expireHold, { holdId: 'h' }, { delayMs: 1000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'MissingScheduling', senderFault: true });
    expect((error as Error).message).toMatch(/JOBS_IDEMPOTENCY_TABLE.*schedulingFromEnv\(\)/);
    expect(sqs.entries).toEqual([]);
  });

  it("without the queue's scheduling, a job that needs a schedule names the variables to set; a short delay does not need them", async () => {
    const { client, sqs } = setup({ scheduling: { idempotencyTableName: 'jobs-idempotency' } });
    const error = await client
      .send(expireHold, { holdId: 'h' }, { delayMs: HOUR_MS })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'MissingScheduling' });
    expect((error as Error).message).toMatch(/JOBS_SCHEDULE_GROUP_HOLDS and JOBS_SCHEDULER_ROLE_ARN_HOLDS/);
    expect(sqs.entries).toEqual([]);
    await expect(client.send(expireHold, { holdId: 'h' }, { delayMs: 60_000 })).resolves.toMatchObject({
      via: 'delay',
    });
  });

  it('sendBatch sends jobs for now and for later together, each its own way', async () => {
    const { client, sqs, scheduler } = setup();
    const result = await client.sendBatch([
      { job: expireHold, data: { holdId: 'now' } },
      { job: expireHold, data: { holdId: 'later' }, options: { delayMs: 2 * HOUR_MS } },
      { job: expireHold, data: { holdId: 'soon' }, options: { delayMs: 30_000 } },
    ]);
    expect(result.failed).toEqual([]);
    expect(result.sent.map((s) => [s.index, s.via])).toEqual([
      [0, undefined],
      [1, 'schedule'],
      [2, 'delay'],
    ]);
    expect(sqs.entries.map((e) => e.DelaySeconds)).toEqual([undefined, 30]);
    expect(scheduler.callsOf('CreateScheduleCommand')).toHaveLength(1);
  });

  it('refuses a message that Scheduler would rewrite (its context attribute keywords)', async () => {
    const { client } = setup();
    const error = await client
      .send(expireHold, { holdId: '<aws.scheduler.execution-id>' }, { delayMs: 1000 })
      .catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/<aws\.scheduler\./);
  });
});

describe('a send for now with the id of a job pending for later', () => {
  it('is refused (it would run the job early and make a later cancel untrue); the job stays cancellable', async () => {
    const { client, sqs, scheduler } = setup();
    await client.send(
      expireHold,
      { holdId: 'h-n' },
      { id: 'hold-h-n', runAt: new Date(Date.now() + 2 * HOUR_MS) },
    );
    const error = await client
      .send(expireHold, { holdId: 'h-n' }, { id: 'hold-h-n' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'AlreadyScheduled', senderFault: true });
    expect((error as Error).message).toMatch(
      /is pending for later .*would run it early.*jobClient\.reschedule/,
    );
    expect(sqs.entries).toEqual([]);
    expect(await client.cancel({ queue: 'holds', id: 'hold-h-n' })).toMatchObject({ status: 'cancelled' });
    expect(scheduler.schedules.size).toBe(0);
  });

  it('goes once the job is no longer pending, and a send without options.id reads nothing', async () => {
    const { client, sqs, dynamodb } = setup();
    await client.send(
      expireHold,
      { holdId: 'h-m' },
      { id: 'hold-h-m', runAt: new Date(Date.now() + 2 * HOUR_MS) },
    );
    await client.cancel({ queue: 'holds', id: 'hold-h-m' });
    await client.send(expireHold, { holdId: 'h-m' }, { id: 'hold-h-m' });
    expect(sqs.entries).toHaveLength(1);
    const reads = dynamodb.calls.length;
    await client.send(expireHold, { holdId: 'h-any' });
    expect(dynamodb.calls.length).toBe(reads);
  });

  it('a client without scheduling makes no DynamoDB call for a send with options.id', async () => {
    const { client, sqs, dynamodb } = setup({ scheduling: {} });
    await client.send(expireHold, { holdId: 'h-p' }, { id: 'hold-h-p' });
    expect(sqs.entries).toHaveLength(1);
    expect(dynamodb.calls).toEqual([]);
  });
});

describe('cancel', () => {
  it('cancels a pending job and deletes its schedule; a second cancel says it was cancelled', async () => {
    const { client, scheduler, dynamodb } = setup();
    const { id } = await client.send(expireHold, { holdId: 'h-6' }, { delayMs: 2 * HOUR_MS });

    await expect(client.cancel({ queue: 'holds', id })).resolves.toMatchObject({
      status: 'cancelled',
      scheduleDeleted: true,
    });
    expect(scheduler.schedules.size).toBe(0);
    expect(dynamodb.items.get(scheduledJobKey(SOURCE, id))?.state).toEqual({ S: 'cancelled' });
    await expect(client.cancel({ queue: 'holds', id })).resolves.toMatchObject({
      status: 'already-cancelled',
    });
  });

  it('a job that went with DelaySeconds is cancelled by its state alone (no schedule to delete)', async () => {
    const { client, scheduler } = setup();
    const { id } = await client.send(expireHold, { holdId: 'h-7' }, { delayMs: 60_000 });
    await expect(client.cancel({ queue: 'holds', id })).resolves.toMatchObject({
      status: 'cancelled',
      scheduleDeleted: false,
    });
    expect(scheduler.calls).toEqual([]);
  });

  it('answers already-started once a worker started it, and not-found for an unknown id or another queue; never throws for them', async () => {
    const { client, dynamodb } = setup();
    const { id } = await client.send(expireHold, { holdId: 'h-8' }, { delayMs: 60_000 });
    const item = dynamodb.items.get(scheduledJobKey(SOURCE, id))!;
    item.state = { S: 'started' };

    await expect(client.cancel({ queue: 'holds', id })).resolves.toMatchObject({ status: 'already-started' });
    await expect(client.cancel({ queue: 'holds', id: 'never-sent' })).resolves.toEqual({
      status: 'not-found',
      id: 'never-sent',
      queue: 'holds',
    });
    await expect(client.cancel({ queue: 'billing', id })).resolves.toMatchObject({ status: 'not-found' });
  });

  it('refuses an identity that is not one', async () => {
    const { client } = setup();
    await expect(client.cancel({ queue: 'nope', id: '' })).rejects.toThrow(
      /identity\.queue must be a queue of queueUrls \(known queues: billing, holds\).*identity\.id must be/,
    );
  });
});

describe('reschedule', () => {
  it("moves a job's schedule (UpdateSchedule, same name) to the new time with its next generation", async () => {
    const { client, scheduler, dynamodb } = setup();
    const { id, scheduleName } = await client.send(expireHold, { holdId: 'h-9' }, { delayMs: 2 * HOUR_MS });
    const runAt = new Date(Date.now() + 5 * HOUR_MS);

    await expect(client.reschedule({ queue: 'holds', id }, runAt)).resolves.toEqual({
      status: 'rescheduled',
      id,
      queue: 'holds',
      runAt: runAt.toISOString(),
      generation: 2,
      via: 'schedule',
    });
    const [update] = scheduler.callsOf('UpdateScheduleCommand');
    expect(update!.input).toMatchObject({ Name: scheduleName, ScheduleExpression: atExpressionOf(runAt) });
    expect(parseEnvelope(update!.input.Target.Input)).toMatchObject({
      id,
      runat: runAt.toISOString(),
      schedulegeneration: '2',
    });
    expect(dynamodb.items.get(scheduledJobKey(SOURCE, id))).toMatchObject({
      generation: { N: '2' },
      runAt: { S: runAt.toISOString() },
    });
  });

  it('when the schedule already fired: a new schedule -g<generation>; the fired message is superseded', async () => {
    const { client, scheduler, dynamodb } = setup();
    const { id, scheduleName } = await client.send(expireHold, { holdId: 'h-10' }, { delayMs: 2 * HOUR_MS });
    scheduler.schedules.clear(); // it fired (ActionAfterCompletion DELETE)

    await client.reschedule({ queue: 'holds', id }, new Date(Date.now() + 4 * HOUR_MS));
    const creates = scheduler.callsOf('CreateScheduleCommand');
    expect(creates.at(-1)!.input.Name).toBe(`${scheduleName}-g2`);
    expect(dynamodb.items.get(scheduledJobKey(SOURCE, id))?.scheduleName).toEqual({
      S: `${scheduleName}-g2`,
    });
  });

  it('a job that went with DelaySeconds, moved within 15 minutes: a new SQS message of generation 2', async () => {
    const { client, sqs } = setup();
    const { id } = await client.send(expireHold, { holdId: 'h-11' }, { delayMs: 60_000 });
    await expect(
      client.reschedule({ queue: 'holds', id }, new Date(Date.now() + 600_000)),
    ).resolves.toMatchObject({
      generation: 2,
      via: 'delay',
    });
    expect(sqs.entries).toHaveLength(2);
    expect(sqs.entries[1]!.DelaySeconds).toBeGreaterThanOrEqual(599);
    expect(parseEnvelope(sqs.entries[1]!.MessageBody!).schedulegeneration).toBe('2');
  });

  it('when the new generation cannot be sent, the job keeps its time and generation', async () => {
    const { client, scheduler, dynamodb } = setup();
    const { id } = await client.send(expireHold, { holdId: 'h-12' }, { delayMs: 2 * HOUR_MS });
    scheduler.failBefore.push('UpdateScheduleCommand');

    await expect(
      client.reschedule({ queue: 'holds', id }, new Date(Date.now() + 4 * HOUR_MS)),
    ).rejects.toThrow(/was not rescheduled .* it keeps its time/);
    expect(dynamodb.items.get(scheduledJobKey(SOURCE, id))?.generation).toEqual({ N: '1' });
  });

  it('answers already-cancelled and not-found instead of throwing', async () => {
    const { client } = setup();
    const { id } = await client.send(expireHold, { holdId: 'h-13' }, { delayMs: 60_000 });
    await client.cancel({ queue: 'holds', id });
    await expect(
      client.reschedule({ queue: 'holds', id }, new Date(Date.now() + HOUR_MS)),
    ).resolves.toMatchObject({
      status: 'already-cancelled',
    });
    await expect(client.reschedule({ queue: 'holds', id: 'x' }, new Date())).resolves.toMatchObject({
      status: 'not-found',
    });
    await expect(client.reschedule({ queue: 'holds', id }, 'soon')).rejects.toMatchObject({
      code: 'InvalidArguments',
    });
  });
});

describe('a state table that does not exist', () => {
  it('send, cancel and reschedule name the table and what to set, not only "Requested resource not found"', async () => {
    const missing = {
      send: async () => {
        throw Object.assign(new Error('Requested resource not found'), {
          name: 'ResourceNotFoundException',
          $fault: 'client',
          $metadata: { httpStatusCode: 400 },
        });
      },
    };
    const { client, sqs } = setup({
      dynamodb: missing,
      scheduling: { ...SCHEDULING, idempotencyTableName: 'NoSuchTable' },
    });
    const expected =
      /the idempotency table "NoSuchTable" .*does not exist in this account and region.*IdempotencyTableName/;
    await expect(
      client.send(expireHold, { holdId: 'h-x' }, { id: 'hold-h-x', delayMs: 2 * HOUR_MS }),
    ).rejects.toThrow(expected);
    await expect(client.cancel({ queue: 'holds', id: 'hold-h-x' })).rejects.toThrow(expected);
    await expect(
      client.reschedule({ queue: 'holds', id: 'hold-h-x' }, new Date(Date.now() + HOUR_MS)),
    ).rejects.toThrow(expected);
    expect(sqs.entries).toEqual([]);
  });
});

describe('the schedule dead-letter queue', () => {
  it('a rescheduled job keeps its DeadLetterConfig (UpdateSchedule sends the whole definition)', async () => {
    const { client, scheduler } = setup();
    await client.send(
      expireHold,
      { holdId: 'h-d' },
      { id: 'hold-h-d', runAt: new Date(Date.now() + 2 * HOUR_MS) },
    );
    await client.reschedule({ queue: 'holds', id: 'hold-h-d' }, new Date(Date.now() + 3 * HOUR_MS));
    const [update] = scheduler.callsOf('UpdateScheduleCommand');
    expect(update!.input.Target.DeadLetterConfig).toEqual({ Arn: HOLDS_DLQ });
  });

  it('a queue without deadLetterQueueArn: the job is sent, and the producer is warned once per queue that it can be dropped', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      const { client, scheduler } = setup();
      await client.send(invoice, { orderId: 'o-w1' }, { id: 'inv-w1', partitionKey: 'u', delayMs: 5_000 });
      await client.send(invoice, { orderId: 'o-w2' }, { id: 'inv-w2', partitionKey: 'u', delayMs: 5_000 });
      expect(scheduler.callsOf('CreateScheduleCommand')[0]!.input.Target.DeadLetterConfig).toBeUndefined();
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]![0])).toMatch(
        /scheduling\.queues\.billing has no deadLetterQueueArn: .*dropped.*JOBS_SCHEDULE_DLQ_ARN_BILLING/,
      );
    } finally {
      warn.mockRestore();
    }
  });

  it('refuses a FIFO or malformed dead-letter queue ARN (Scheduler takes a standard queue only)', () => {
    expect(
      () =>
        new JobClient({
          source: SOURCE,
          queueUrls: URLS,
          scheduling: {
            queues: { holds: { groupName: 'g', roleArn: ROLE, deadLetterQueueArn: `${HOLDS_DLQ}.fifo` } },
          },
        }),
    ).toThrow(/scheduling\.queues\.holds\.deadLetterQueueArn must be the ARN of a standard SQS queue/);
  });
});

describe('schedulingFromEnv', () => {
  it('reads each queue whose group and role are both set, and the table (a half-set queue is refused: test/unit/scheduling-env.test.ts)', () => {
    expect(
      schedulingFromEnv({
        JOBS_SCHEDULE_GROUP_BOOKING_HOLDS: 'app-booking-holds',
        JOBS_SCHEDULER_ROLE_ARN_BOOKING_HOLDS: ROLE,
        JOBS_SCHEDULE_DLQ_ARN_BOOKING_HOLDS: HOLDS_DLQ,
        JOBS_IDEMPOTENCY_TABLE: 'jobs-idempotency',
      }),
    ).toEqual({
      queues: {
        'booking-holds': { groupName: 'app-booking-holds', roleArn: ROLE, deadLetterQueueArn: HOLDS_DLQ },
      },
      idempotencyTableName: 'jobs-idempotency',
    });
  });

  it('JobClient refuses a scheduling option that is not one, naming what is wrong', () => {
    expect(
      () =>
        new JobClient({
          source: SOURCE,
          queueUrls: URLS,
          scheduling: { queues: { holds: { groupName: 'bad name', roleArn: 'role' } } },
        }),
    ).toThrow(
      /scheduling\.queues\.holds\.groupName must be a schedule group name.*scheduling\.queues\.holds\.roleArn must be an IAM role ARN/s,
    );
  });
});
