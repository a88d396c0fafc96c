/**
 * The EventBridge Scheduler calls `JobClient` makes for jobs sent for later, against moto's
 * Scheduler (a second, independent implementation of the API; it never fires a schedule): the
 * CreateSchedule request is one Scheduler takes and reads back (GetSchedule), a second create of
 * the same name answers ConflictException and a retried send makes no second schedule, a
 * reschedule moves the schedule (UpdateSchedule), a cancel deletes it (DeleteSchedule) and a
 * delete of an absent schedule answers ResourceNotFoundException. The state items are on moto's
 * DynamoDB, the messages on its SQS. Run by `npm run test:conformance`.
 */
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  CreateScheduleGroupCommand,
  GetScheduleCommand,
  ListSchedulesCommand,
  SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JobClient } from '../../lib/client/job-client.ts';
import {
  createOneTimeSchedule,
  deleteOneTimeSchedule,
  ScheduleConflictError,
} from '../../lib/client/one-time-schedules.ts';
import { parseEnvelope } from '../../lib/core/envelope.ts';
import { atExpressionOf } from '../../lib/core/schedule-expression.ts';
import { type MotoServer, startMotoServer } from '../factories/moto-server.ts';

const REGION = 'us-east-1';
const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };
const ROLE = 'arn:aws:iam::123456789012:role/holds-scheduler';
const GROUP = 'conformance-holds';
const hold = { type: 'booking.expire-hold', queue: 'holds', schema: z.object({ holdId: z.string() }) };
const invoice = { type: 'billing.invoice', queue: 'billing', schema: z.object({ orderId: z.string() }) };

describe("JobClient's Scheduler calls on moto", () => {
  let moto: MotoServer | undefined;
  let scheduler: SchedulerClient;
  let client: JobClient;

  beforeAll(async () => {
    moto = await startMotoServer();
    const config = { endpoint: moto.endpoint, region: REGION, credentials: CREDENTIALS };
    scheduler = new SchedulerClient(config);
    const sqs = new SQSClient(config);
    const dynamodb = new DynamoDBClient(config);
    const [holds, billing] = await Promise.all([
      sqs.send(new CreateQueueCommand({ QueueName: 'holds' })),
      sqs.send(
        new CreateQueueCommand({
          QueueName: 'billing.fifo',
          Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
        }),
      ),
      dynamodb.send(
        new CreateTableCommand({
          TableName: 'jobs-idempotency',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      ),
      scheduler.send(new CreateScheduleGroupCommand({ Name: GROUP })),
    ]);
    client = new JobClient({
      source: '/services/booking',
      queueUrls: { holds: holds.QueueUrl as string, billing: billing.QueueUrl as string },
      sqs,
      dynamodb,
      scheduler,
      scheduling: {
        idempotencyTableName: 'jobs-idempotency',
        queues: {
          holds: {
            groupName: GROUP,
            roleArn: ROLE,
            queueArn: 'arn:aws:sqs:us-east-1:123456789012:holds',
            deadLetterQueueArn: 'arn:aws:sqs:us-east-1:123456789012:holds-schedule-dlq',
          },
          billing: {
            groupName: GROUP,
            roleArn: ROLE,
            queueArn: 'arn:aws:sqs:us-east-1:123456789012:billing.fifo',
          },
        },
      },
    });
  });

  afterAll(() => {
    moto?.stop();
  });

  const get = (name: string) => scheduler.send(new GetScheduleCommand({ Name: name, GroupName: GROUP }));

  it('CreateSchedule: moto takes the one-time schedule and reads back its definition', async () => {
    const runAt = new Date(Date.now() + 2 * 3_600_000);
    const sent = await client.send(hold, { holdId: 'h-1' }, { id: 'hold-h-1', runAt });
    const schedule = await get(sent.scheduleName as string);
    expect(schedule).toMatchObject({
      Name: sent.scheduleName,
      GroupName: GROUP,
      ScheduleExpression: atExpressionOf(runAt),
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      State: 'ENABLED',
      Target: {
        Arn: 'arn:aws:sqs:us-east-1:123456789012:holds',
        RoleArn: ROLE,
        DeadLetterConfig: { Arn: 'arn:aws:sqs:us-east-1:123456789012:holds-schedule-dlq' },
      },
    });
    expect(parseEnvelope(schedule.Target?.Input as string)).toMatchObject({
      id: 'hold-h-1',
      schedulegeneration: '1',
    });
  });

  it('a retried send meets ConflictException on the same name and makes no second schedule', async () => {
    const runAt = new Date(Date.now() + 3 * 3_600_000).toISOString();
    const first = await client.send(hold, { holdId: 'h-2' }, { id: 'hold-h-2', runAt });
    // The retry: its CreateSchedule of the same name fails on moto with ConflictException.
    const again = await client.send(hold, { holdId: 'h-2' }, { id: 'hold-h-2', runAt });
    expect(again.scheduleName).toBe(first.scheduleName);
    const listed = await scheduler.send(
      new ListSchedulesCommand({ GroupName: GROUP, NamePrefix: first.scheduleName }),
    );
    expect(listed.Schedules?.map((s) => s.Name)).toEqual([first.scheduleName]);
  });

  it('a second CreateSchedule of the same name with another message is refused (ConflictException)', async () => {
    const base = {
      name: 'sj-conformance-conflict',
      groupName: GROUP,
      runAtMs: Date.now() + 3_600_000,
      queueArn: 'arn:aws:sqs:us-east-1:123456789012:holds',
      roleArn: ROLE,
      description: 'conformance',
    };
    await expect(createOneTimeSchedule(scheduler, { ...base, body: '{"a":1}' })).resolves.toBe('created');
    await expect(createOneTimeSchedule(scheduler, { ...base, body: '{"a":1}' })).resolves.toBe('existed');
    await expect(createOneTimeSchedule(scheduler, { ...base, body: '{"a":2}' })).rejects.toBeInstanceOf(
      ScheduleConflictError,
    );
  });

  it('FIFO: the target keeps the MessageGroupId', async () => {
    const sent = await client.send(
      invoice,
      { orderId: 'o-1' },
      { id: 'inv-o-1', partitionKey: 'user-7', delayMs: 60_000 },
    );
    expect((await get(sent.scheduleName as string)).Target?.SqsParameters).toEqual({
      MessageGroupId: 'user-7',
    });
  });

  it('reschedule: UpdateSchedule moves the same schedule to the new time, with generation 2', async () => {
    const sent = await client.send(hold, { holdId: 'h-3' }, { id: 'hold-h-3', delayMs: 2 * 3_600_000 });
    const runAt = new Date(Date.now() + 5 * 3_600_000);
    await expect(client.reschedule({ queue: 'holds', id: 'hold-h-3' }, runAt)).resolves.toMatchObject({
      status: 'rescheduled',
      generation: 2,
    });
    const schedule = await get(sent.scheduleName as string);
    expect(schedule.ScheduleExpression).toBe(atExpressionOf(runAt));
    expect(parseEnvelope(schedule.Target?.Input as string).schedulegeneration).toBe('2');
  });

  it('cancel: DeleteSchedule removes it; a delete of an absent schedule answers not-found', async () => {
    const sent = await client.send(hold, { holdId: 'h-4' }, { id: 'hold-h-4', delayMs: 2 * 3_600_000 });
    await expect(client.cancel({ queue: 'holds', id: 'hold-h-4' })).resolves.toMatchObject({
      status: 'cancelled',
      scheduleDeleted: true,
    });
    await expect(get(sent.scheduleName as string)).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });
    await expect(deleteOneTimeSchedule(scheduler, sent.scheduleName as string, GROUP)).resolves.toBe(
      'not-found',
    );
  });
});
