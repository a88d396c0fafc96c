/**
 * The local EventBridge Scheduler emulator (lib/local/scheduler/) driven through
 * `@aws-sdk/client-scheduler` as JobClient and operators call it, firing into the embedded fauxqs
 * on a manual clock: the test moves time, nothing sleeps. Each firing is observed where a user
 * would see it: a message on the target queue (or the schedule's DLQ) with the substituted body.
 */
import {
  ConflictException,
  CreateScheduleCommand,
  CreateScheduleGroupCommand,
  DeleteScheduleCommand,
  DeleteScheduleGroupCommand,
  GetScheduleCommand,
  GetScheduleGroupCommand,
  ListScheduleGroupsCommand,
  ListSchedulesCommand,
  ResourceNotFoundException,
  SchedulerClient,
  UpdateScheduleCommand,
  ValidationException,
} from '@aws-sdk/client-scheduler';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alignFauxqsBodyCharacters } from '../../lib/local/emulators.ts';
import {
  ManualClock,
  type SchedulerEmulator,
  startSchedulerEmulator,
} from '../../lib/local/scheduler/index.ts';
import { fireScheduleNow } from '../../lib/ops/fire-schedule.ts';
import { type LoopbackFauxqs, startLoopbackFauxqs } from '../factories/loopback-fauxqs.ts';

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const region = 'us-east-1';
const START = Date.parse('2026-12-01T12:00:00Z');

let fauxqs: LoopbackFauxqs;
let sqs: SQSClient;
let scheduler: SchedulerEmulator;
let client: SchedulerClient;
const clock = new ManualClock(START);
const urlsByArn = new Map<string, string>();
let counter = 0;

async function queue(label: string, fifo = false): Promise<{ url: string; arn: string }> {
  const name = `${label}-${++counter}${fifo ? '.fifo' : ''}`;
  const created = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: fifo ? { FifoQueue: 'true', ContentBasedDeduplication: 'true' } : {},
    }),
  );
  const url = `http://127.0.0.1:${fauxqs.port}${new URL(created.QueueUrl as string).pathname}`;
  const got = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  const arn = got.Attributes?.QueueArn as string;
  urlsByArn.set(arn, url);
  return { url, arn };
}

/** Receives until `count` messages came or a receive comes back empty (waits on SQS, not on time). */
async function receive(url: string, count: number): Promise<Message[]> {
  const out: Message[] = [];
  while (out.length < count) {
    const got = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 2,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    if ((got.Messages ?? []).length === 0) break;
    out.push(...(got.Messages ?? []));
  }
  return out;
}

/** No message within a short receive: what a schedule that must not fire leaves. */
async function none(url: string): Promise<void> {
  const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1 }));
  expect(got.Messages ?? []).toEqual([]);
}

const target = (arn: string, input: string, extra: Record<string, unknown> = {}) => ({
  Arn: arn,
  RoleArn: 'arn:aws:iam::000000000000:role/scheduler',
  Input: input,
  ...extra,
});

const ENVELOPE =
  '{"id":"nightly@<aws.scheduler.scheduled-time>","time":"<aws.scheduler.scheduled-time>","exec":"<aws.scheduler.execution-id>","attempt":"<aws.scheduler.attempt-number>","arn":"<aws.scheduler.schedule-arn>"}';

beforeAll(async () => {
  await alignFauxqsBodyCharacters();
  fauxqs = await startLoopbackFauxqs();
  sqs = new SQSClient({ endpoint: `http://127.0.0.1:${fauxqs.port}`, region, credentials });
  scheduler = await startSchedulerEmulator({
    sqs,
    region,
    accountId: '000000000000',
    clock,
    queueUrlOf: async (arn) => {
      const url = urlsByArn.get(arn);
      if (url === undefined)
        throw Object.assign(new Error('The specified queue does not exist.'), { name: 'QueueDoesNotExist' });
      return url;
    },
  });
  client = new SchedulerClient({ endpoint: scheduler.url, region, credentials });
});

afterAll(async () => {
  client?.destroy();
  await scheduler?.stop();
  sqs?.destroy();
  await fauxqs?.stop();
});

describe('the Scheduler API as @aws-sdk/client-scheduler calls it', () => {
  it('creates, reads, updates, lists and deletes a schedule, with AWS error shapes', async () => {
    const q = await queue('api');
    const created = await client.send(
      new CreateScheduleCommand({
        Name: 'api-one',
        ScheduleExpression: 'cron(0 23 * * ? *)',
        ScheduleExpressionTimezone: 'Europe/Berlin',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: target(q.arn, '{}'),
      }),
    );
    expect(created.ScheduleArn).toBe('arn:aws:scheduler:us-east-1:000000000000:schedule/default/api-one');
    const got = await client.send(new GetScheduleCommand({ Name: 'api-one' }));
    expect(got).toMatchObject({
      Name: 'api-one',
      GroupName: 'default',
      State: 'ENABLED',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      Target: { Arn: q.arn, RetryPolicy: { MaximumEventAgeInSeconds: 86400, MaximumRetryAttempts: 185 } },
    });
    expect(got.CreationDate).toEqual(new Date(START));

    const again = client.send(
      new CreateScheduleCommand({
        Name: 'api-one',
        ScheduleExpression: 'rate(1 hour)',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: target(q.arn, '{}'),
      }),
    );
    await expect(again).rejects.toBeInstanceOf(ConflictException);
    await expect(again).rejects.toThrow('Schedule api-one already exists.');

    await client.send(
      new UpdateScheduleCommand({
        Name: 'api-one',
        ScheduleExpression: 'rate(5 minutes)',
        State: 'DISABLED',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: target(q.arn, '{}'),
      }),
    );
    expect(await client.send(new GetScheduleCommand({ Name: 'api-one' }))).toMatchObject({
      State: 'DISABLED',
      ScheduleExpression: 'rate(5 minutes)',
      ScheduleExpressionTimezone: 'UTC',
    });
    const disabled = await client.send(new ListSchedulesCommand({ State: 'DISABLED', NamePrefix: 'api-' }));
    expect(disabled.Schedules?.map((s) => s.Name)).toEqual(['api-one']);
    expect(disabled.Schedules?.[0]?.Target).toEqual({ Arn: q.arn });

    await client.send(new DeleteScheduleCommand({ Name: 'api-one' }));
    const missing = client.send(new GetScheduleCommand({ Name: 'api-one' }));
    await expect(missing).rejects.toBeInstanceOf(ResourceNotFoundException);
    await expect(missing).rejects.toThrow('Schedule api-one does not exist.');
    await expect(client.send(new DeleteScheduleCommand({ Name: 'api-one' }))).rejects.toBeInstanceOf(
      ResourceNotFoundException,
    );
  });

  it('refuses bad input with ValidationException saying what is wrong', async () => {
    const q = await queue('bad');
    const create = (over: Record<string, unknown>) =>
      client.send(
        new CreateScheduleCommand({
          Name: 'bad-one',
          ScheduleExpression: 'rate(1 hour)',
          FlexibleTimeWindow: { Mode: 'OFF' },
          Target: target(q.arn, '{}'),
          ...over,
        } as never),
      );
    await expect(create({ Name: 'has space' })).rejects.toThrow(/at 'name' failed to satisfy constraint/);
    await expect(create({ ScheduleExpression: 'cron(0 23 * * *)' })).rejects.toThrow(
      /Invalid Schedule Expression: .*six/,
    );
    // A cron the cron library cannot evaluate is a ValidationException naming the field, not a TypeError.
    await expect(create({ ScheduleExpression: 'cron(0/0 * * * ? *)' })).rejects.toThrow(
      'Invalid Schedule Expression: cron(0/0 * * * ? *): minutes field: "0/0" has step 0',
    );
    await expect(create({ ScheduleExpression: 'cron(0 5-1 * * ? *)' })).rejects.toBeInstanceOf(
      ValidationException,
    );
    await expect(create({ ScheduleExpressionTimezone: 'Mars/Olympus' })).rejects.toBeInstanceOf(
      ValidationException,
    );
    await expect(
      create({ Target: target(q.arn, '{}', { RetryPolicy: { MaximumRetryAttempts: 186 } }) }),
    ).rejects.toThrow(/maximumRetryAttempts.*between 0 and 185/);
    await expect(
      create({ Target: target('arn:aws:lambda:us-east-1:000000000000:function:f', '{}') }),
    ).rejects.toThrow(/delivers only to SQS queues/);
    await expect(create({ GroupName: 'no-such-group' })).rejects.toThrow(
      'Schedule group no-such-group does not exist.',
    );
  });

  it('makes CreateSchedule idempotent by ClientToken', async () => {
    const q = await queue('token');
    const input = {
      Name: 'token-one',
      ScheduleExpression: 'at(2026-12-24T18:00:00)',
      FlexibleTimeWindow: { Mode: 'OFF' as const },
      Target: target(q.arn, '{}'),
      ClientToken: 'retry-1',
    };
    const first = await client.send(new CreateScheduleCommand(input));
    const retried = await client.send(new CreateScheduleCommand(input));
    expect(retried.ScheduleArn).toBe(first.ScheduleArn);
    await expect(
      client.send(new CreateScheduleCommand({ ...input, ScheduleExpression: 'at(2026-12-25T18:00:00)' })),
    ).rejects.toBeInstanceOf(ConflictException);
    await client.send(new DeleteScheduleCommand({ Name: 'token-one' }));
  });

  it('lists in pages and manages schedule groups', async () => {
    const q = await queue('paging');
    await client.send(new CreateScheduleGroupCommand({ Name: 'paging-group' }));
    await expect(client.send(new CreateScheduleGroupCommand({ Name: 'paging-group' }))).rejects.toThrow(
      'Schedule group paging-group already exists.',
    );
    for (const n of [1, 2, 3, 4, 5]) {
      await client.send(
        new CreateScheduleCommand({
          Name: `page-${n}`,
          GroupName: 'paging-group',
          ScheduleExpression: 'rate(1 day)',
          State: 'DISABLED',
          FlexibleTimeWindow: { Mode: 'OFF' },
          Target: target(q.arn, '{}'),
        }),
      );
    }
    const names: string[] = [];
    let NextToken: string | undefined;
    let pages = 0;
    do {
      const page = await client.send(
        new ListSchedulesCommand({ GroupName: 'paging-group', MaxResults: 2, NextToken }),
      );
      names.push(...(page.Schedules ?? []).map((s) => s.Name as string));
      NextToken = page.NextToken;
      pages++;
    } while (NextToken);
    expect(names).toEqual(['page-1', 'page-2', 'page-3', 'page-4', 'page-5']);
    expect(pages).toBe(3);
    const groups = await client.send(new ListScheduleGroupsCommand({ NamePrefix: 'paging' }));
    expect(groups.ScheduleGroups?.map((g) => [g.Name, g.State])).toEqual([['paging-group', 'ACTIVE']]);
    expect((await client.send(new GetScheduleGroupCommand({ Name: 'default' }))).Name).toBe('default');
    await client.send(new DeleteScheduleGroupCommand({ Name: 'paging-group' }));
    expect((await client.send(new ListSchedulesCommand({ NamePrefix: 'page-' }))).Schedules).toEqual([]);
  });
});

describe('firing', () => {
  it('fires a one-time schedule once at its time, substitutes the context attributes, and deletes it', async () => {
    const q = await queue('once');
    const when = new Date(clock.now() + 3_600_000);
    const at = `at(${when.toISOString().slice(0, 19)})`;
    await client.send(
      new CreateScheduleCommand({
        Name: 'once-1',
        ScheduleExpression: at,
        ScheduleExpressionTimezone: 'UTC',
        ActionAfterCompletion: 'DELETE',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: target(q.arn, ENVELOPE),
      }),
    );
    clock.advanceTo(when.getTime() - 1000);
    await scheduler.idle();
    await none(q.url);
    clock.advanceTo(when.getTime());
    await scheduler.idle();
    const [message, ...more] = await receive(q.url, 1);
    expect(more).toEqual([]);
    const body = JSON.parse(message?.Body as string);
    const expectedTime = `${when.toISOString().slice(0, 19)}Z`;
    expect(body).toMatchObject({
      id: `nightly@${expectedTime}`,
      time: expectedTime,
      attempt: '1',
      arn: 'arn:aws:scheduler:us-east-1:000000000000:schedule/default/once-1',
    });
    expect(body.exec).toMatch(/^[0-9a-f]{16}$/);
    await expect(client.send(new GetScheduleCommand({ Name: 'once-1' }))).rejects.toBeInstanceOf(
      ResourceNotFoundException,
    );
    clock.advanceBy(86_400_000);
    await scheduler.idle();
    await none(q.url);
  });

  it('fires cron schedules at their wall-clock time in their time zone, never a DISABLED one', async () => {
    const q = await queue('cron');
    const off = await queue('disabled');
    // 23:00 in New York on 2026-12-02 is 04:00 UTC on 2026-12-03 (EST, UTC-5).
    expect(clock.now()).toBeLessThan(Date.parse('2026-12-03T04:00:00Z'));
    await client.send(
      new CreateScheduleCommand({
        Name: 'cron-ny',
        ScheduleExpression: 'cron(0 23 * * ? *)',
        ScheduleExpressionTimezone: 'America/New_York',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: target(q.arn, '<aws.scheduler.scheduled-time>'),
      }),
    );
    await client.send(
      new CreateScheduleCommand({
        Name: 'cron-off',
        ScheduleExpression: 'rate(1 minute)',
        State: 'DISABLED',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: target(off.arn, 'never'),
      }),
    );
    clock.advanceTo(Date.parse('2026-12-04T05:00:00Z'));
    await scheduler.idle();
    const bodies = (await receive(q.url, 2)).map((m) => m.Body).sort();
    expect(bodies).toEqual(['2026-12-03T04:00:00Z', '2026-12-04T04:00:00Z']);
    await none(off.url);
    await client.send(new DeleteScheduleCommand({ Name: 'cron-ny' }));
    await client.send(new DeleteScheduleCommand({ Name: 'cron-off' }));
  });

  it('sends FIFO firings with the target MessageGroupId', async () => {
    const q = await queue('fifo', true);
    const when = clock.now() + 60_000;
    await client.send(
      new CreateScheduleCommand({
        Name: 'fifo-1',
        ScheduleExpression: `at(${new Date(when).toISOString().slice(0, 19)})`,
        ActionAfterCompletion: 'DELETE',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: target(q.arn, 'group me', { SqsParameters: { MessageGroupId: 'user-7' } }),
      }),
    );
    clock.advanceTo(when);
    await scheduler.idle();
    const [message] = await receive(q.url, 1);
    expect(message?.Attributes?.MessageGroupId).toBe('user-7');
  });

  it('delivers a firing twice under the duplicate-delivery fault: same body, same execution id', async () => {
    const q = await queue('twice');
    const when = clock.now() + 60_000;
    await client.send(
      new CreateScheduleCommand({
        Name: 'twice-1',
        ScheduleExpression: `at(${new Date(when).toISOString().slice(0, 19)})`,
        ActionAfterCompletion: 'DELETE',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: target(q.arn, ENVELOPE),
      }),
    );
    scheduler.duplicateNextFirings(1);
    clock.advanceTo(when);
    await scheduler.idle();
    const bodies = (await receive(q.url, 2)).map((m) => m.Body);
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toBe(bodies[1]);
    expect(scheduler.firings().at(-1)).toMatchObject({ name: 'twice-1', copies: 2, outcome: 'delivered' });
  });

  it('fires a recurring schedule on demand with an identity of its own, optionally twice', async () => {
    const q = await queue('manual');
    await client.send(
      new CreateScheduleCommand({
        Name: 'nightly',
        ScheduleExpression: 'cron(0 23 * * ? *)',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: target(q.arn, ENVELOPE),
      }),
    );
    const planned = scheduler.planned().get('default/nightly');
    const record = await scheduler.fireNow('nightly', { duplicate: true });
    expect(record).toMatchObject({ manual: true, copies: 2, outcome: 'delivered' });
    const bodies = (await receive(q.url, 2)).map((m) => JSON.parse(m.Body as string));
    expect(bodies).toHaveLength(2);
    const now = new Date(clock.now()).toISOString();
    expect(bodies[0]).toMatchObject({ id: `nightly@${now}`, time: now });
    expect(bodies[1]).toEqual(bodies[0]);
    // Not the identity of any real firing (those have no fraction), and the plan is unchanged.
    expect(bodies[0].time).toMatch(/\.\d{3}Z$/);
    expect(scheduler.planned().get('default/nightly')).toBe(planned);
    await expect(scheduler.fireNow('no-such')).rejects.toThrow('Schedule no-such does not exist.');
    // The same through the emulator's HTTP route (for a CLI talking to a running local stack).
    clock.advanceBy(1);
    const answer = await fetch(`${scheduler.url}/_local/schedules/nightly/fire?groupName=default`, {
      method: 'POST',
    });
    expect(answer.status).toBe(200);
    const viaHttp = (await answer.json()) as { scheduledTime: string; outcome: string };
    expect(viaHttp).toMatchObject({
      scheduledTime: new Date(clock.now()).toISOString(),
      outcome: 'delivered',
    });
    const [third] = await receive(q.url, 1);
    expect(JSON.parse(third?.Body as string).id).toBe(`nightly@${viaHttp.scheduledTime}`);
    const missing = await fetch(`${scheduler.url}/_local/schedules/no-such/fire`, { method: 'POST' });
    expect([missing.status, missing.headers.get('x-amzn-errortype')]).toEqual([
      404,
      'ResourceNotFoundException',
    ]);
    await client.send(new DeleteScheduleCommand({ Name: 'nightly' }));
  });

  it('fires a rate schedule from its StartDate every interval until its EndDate, then deletes it', async () => {
    const q = await queue('rate');
    const start = clock.now() + 600_000;
    await client.send(
      new CreateScheduleCommand({
        Name: 'rate-window',
        ScheduleExpression: 'rate(10 minutes)',
        StartDate: new Date(start),
        EndDate: new Date(start + 25 * 60_000),
        ActionAfterCompletion: 'DELETE',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: target(q.arn, '<aws.scheduler.scheduled-time>'),
      }),
    );
    clock.advanceTo(start + 3_600_000);
    await scheduler.idle();
    const bodies = (await receive(q.url, 3)).map((m) => m.Body).sort();
    const at = (minutes: number) => `${new Date(start + minutes * 60_000).toISOString().slice(0, 19)}Z`;
    expect(bodies).toEqual([at(0), at(10), at(20)]);
    await none(q.url);
    await expect(client.send(new GetScheduleCommand({ Name: 'rate-window' }))).rejects.toBeInstanceOf(
      ResourceNotFoundException,
    );
  });

  it('fires a rate schedule without StartDate one interval after its creation', async () => {
    const q = await queue('rate-now');
    const created = clock.now();
    await client.send(
      new CreateScheduleCommand({
        Name: 'rate-now',
        ScheduleExpression: 'rate(1 hour)',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: target(q.arn, '<aws.scheduler.scheduled-time>'),
      }),
    );
    expect(scheduler.planned().get('default/rate-now')).toBe(created + 3_600_000);
    await client.send(new DeleteScheduleCommand({ Name: 'rate-now' }));
    expect(scheduler.planned().has('default/rate-now')).toBe(false);
  });

  it('dead-letters at once, without retries, a send SQS refuses as malformed (FIFO target without MessageGroupId)', async () => {
    const q = await queue('no-group', true);
    const dlq = await queue('no-group-dlq');
    const when = clock.now() + 60_000;
    await client.send(
      new CreateScheduleCommand({
        Name: 'no-group-1',
        ScheduleExpression: `at(${new Date(when).toISOString().slice(0, 19)})`,
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: target(q.arn, 'x', { DeadLetterConfig: { Arn: dlq.arn } }),
      }),
    );
    clock.advanceTo(when);
    await scheduler.idle();
    const [dead] = await receive(dlq.url, 1);
    expect(dead?.MessageAttributes?.RETRY_ATTEMPTS?.StringValue).toBe('0');
    expect(dead?.MessageAttributes?.EXHAUSTED_RETRY_CONDITION).toBeUndefined();
    expect(dead?.MessageAttributes?.ERROR_CODE?.StringValue).toMatch(
      /^AWS\.SimpleQueueService\.(Missing|Invalid)/,
    );
  });

  it('gives up on a failing delivery once the event is older than MaximumEventAgeInSeconds', async () => {
    const q = await queue('aged');
    const dlq = await queue('aged-dlq');
    await sqs.send(new DeleteQueueCommand({ QueueUrl: q.url }));
    const when = clock.now() + 60_000;
    await client.send(
      new CreateScheduleCommand({
        Name: 'aged-1',
        ScheduleExpression: `at(${new Date(when).toISOString().slice(0, 19)})`,
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: target(q.arn, 'x', {
          RetryPolicy: { MaximumEventAgeInSeconds: 60, MaximumRetryAttempts: 185 },
          DeadLetterConfig: { Arn: dlq.arn },
        }),
      }),
    );
    clock.advanceTo(when);
    await scheduler.idle();
    // Retries 1 s, 2 s, 4 s, 8 s, 16 s apart (at 1, 3, 7, 15, 31 s); the next, at 63 s, would be too old.
    for (let i = 0; i < 10 && scheduler.firings().at(-1)?.outcome === 'pending'; i++) {
      clock.advanceTo(clock.nextWakeUp() ?? clock.now());
      await scheduler.idle();
    }
    const [dead] = await receive(dlq.url, 1);
    expect(dead?.MessageAttributes?.EXHAUSTED_RETRY_CONDITION?.StringValue).toBe('MaximumEventAgeInSeconds');
    expect(Number(dead?.MessageAttributes?.RETRY_ATTEMPTS?.StringValue)).toBe(5);
  });

  it("fires a schedule now through the SDK alone (the CLI's way, on AWS as locally)", async () => {
    const q = await queue('ops-fire');
    await client.send(
      new CreateScheduleCommand({
        Name: 'ops-nightly',
        ScheduleExpression: 'cron(0 23 * * ? *)',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: target(q.arn, ENVELOPE),
      }),
    );
    const now = new Date('2026-12-05T10:11:12.345Z');
    const fired = await fireScheduleNow({
      scheduler: client,
      sqs,
      name: 'ops-nightly',
      now,
      duplicate: true,
    });
    expect(fired.scheduledTime).toBe('2026-12-05T10:11:12.345Z');
    expect(new URL(fired.queueUrl).pathname).toBe(new URL(q.url).pathname);
    const bodies = (await receive(q.url, 2)).map((m) => JSON.parse(m.Body as string));
    expect(bodies).toHaveLength(2);
    expect(bodies[0]).toMatchObject({
      id: 'nightly@2026-12-05T10:11:12.345Z',
      exec: fired.executionId,
      attempt: '1',
      arn: 'arn:aws:scheduler:us-east-1:000000000000:schedule/default/ops-nightly',
    });
    expect(bodies[1]).toEqual(bodies[0]);
    await expect(fireScheduleNow({ scheduler: client, sqs, name: 'no-such' })).rejects.toBeInstanceOf(
      ResourceNotFoundException,
    );
    await client.send(new DeleteScheduleCommand({ Name: 'ops-nightly' }));
  });

  it('retries a failed delivery under the RetryPolicy, then sends the dead-letter event with Scheduler attributes', async () => {
    const q = await queue('doomed');
    const dlq = await queue('schedule-dlq');
    // The queue is deleted under the schedule: SendMessage to its URL fails, as on AWS.
    await sqs.send(new DeleteQueueCommand({ QueueUrl: q.url }));
    const when = clock.now() + 60_000;
    await client.send(
      new CreateScheduleCommand({
        Name: 'doomed-1',
        ScheduleExpression: `at(${new Date(when).toISOString().slice(0, 19)})`,
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: target(q.arn, ENVELOPE, {
          RetryPolicy: { MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 },
          DeadLetterConfig: { Arn: dlq.arn },
        }),
      }),
    );
    clock.advanceTo(when);
    await scheduler.idle();
    await none(dlq.url);
    // Two retries, each due when the clock reaches it.
    for (let i = 0; i < 2; i++) {
      clock.advanceBy(60_000);
      await scheduler.idle();
    }
    const [dead] = await receive(dlq.url, 1);
    const attrs = Object.fromEntries(
      Object.entries(dead?.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue]),
    );
    expect(attrs).toMatchObject({
      ERROR_CODE: 'AWS.SimpleQueueService.NonExistentQueue',
      EXHAUSTED_RETRY_CONDITION: 'MaximumRetryAttempts',
      IS_PAYLOAD_TRUNCATED: 'false',
      RETRY_ATTEMPTS: '2',
      SCHEDULED_TIME: `${new Date(when).toISOString().slice(0, 19)}Z`,
      SCHEDULE_ARN: 'arn:aws:scheduler:us-east-1:000000000000:schedule/default/doomed-1',
      TARGET_ARN: q.arn,
    });
    expect(attrs.EXECUTION_ID).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.parse(dead?.Body as string)).toMatchObject({ attempt: '3', exec: attrs.EXECUTION_ID });
    expect(scheduler.firings().at(-1)).toMatchObject({
      name: 'doomed-1',
      outcome: 'dead-lettered',
      attempts: 3,
    });
  });
});
