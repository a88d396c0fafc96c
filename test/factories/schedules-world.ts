/**
 * The world the schedules tests run in (the `sqs-jobs schedules` CLI test and the console's
 * schedules page test): fauxqs and dynalite, a `billing` queue with its DLQ and a `holds` queue,
 * the local EventBridge Scheduler emulator on a manual clock (nothing fires unless the test moves
 * the clock or fires it), a schedule group holding the recurring `nightly-invoices` schedule
 * (cron(0 23 * * ? *) in Europe/Berlin, a `billing.nightly-invoices` job on `billing`), and a real
 * `JobClient` whose `holds` queue sends jobs for later through that group.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import {
  CreateScheduleCommand,
  CreateScheduleGroupCommand,
  SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { z } from 'zod';
import { JobClient } from '../../lib/client/job-client.ts';
import {
  type ManualClock,
  type SchedulerEmulator,
  startSchedulerEmulator,
} from '../../lib/local/scheduler/index.ts';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { createWorker, type WorkerHandler } from '../../lib/runtime/worker.ts';
import { type DynaliteHandle, startDynalite } from '../support/dynalite.ts';
import { type EmulatedQueue, type EmulatedSqs, startEmulatedSqs } from './emulated-sqs.ts';

export const region = 'us-east-1';
export const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };

/** The job the `holds` queue carries, sent for later by the tests. */
export const expireHold = {
  type: 'booking.expire-hold',
  queue: 'holds',
  schema: z.object({ holdId: z.string() }),
};

export interface SchedulesWorldOptions {
  /** The schedule group of the recurring schedule and of the jobs sent for later. */
  readonly group: string;
  readonly clock: ManualClock;
  /** The `JobClient`'s CloudEvents source. */
  readonly source: string;
  /** The `data` of each nightly firing. */
  readonly nightlyData: Record<string, unknown>;
  /** Give the nightly schedule's target a retry policy (3 attempts within 3600 s) and `billing`'s DLQ. */
  readonly nightlyRetries?: boolean;
}

export interface SchedulesWorld {
  readonly emulator: EmulatedSqs;
  readonly db: DynaliteHandle;
  /** The idempotency table (also the table of the client's scheduled jobs). */
  readonly tableName: string;
  readonly queue: EmulatedQueue;
  readonly dlq: EmulatedQueue;
  readonly holds: EmulatedQueue;
  readonly scheduler: SchedulerEmulator;
  readonly schedulerClient: SchedulerClient;
  readonly client: JobClient;
  stop(): Promise<void>;
}

export async function startSchedulesWorld(options: SchedulesWorldOptions): Promise<SchedulesWorld> {
  const { group } = options;
  const [emulator, db] = await Promise.all([startEmulatedSqs(), startDynalite()]);
  const tableName = await db.createTable();
  const { queue, dlq } = await emulator.createQueuePair('billing', false);
  const holds = await emulator.createQueue('holds', false);
  const urls = new Map([
    [queue.arn, queue.url],
    [dlq.arn, dlq.url],
    [holds.arn, holds.url],
  ]);
  const scheduler = await startSchedulerEmulator({
    sqs: emulator.sqs,
    region,
    accountId: '000000000000',
    clock: options.clock,
    queueUrlOf: async (arn) => {
      const url = urls.get(arn);
      // As SQS answers for a queue that is gone: the emulator dead-letters the firing with it.
      if (url === undefined)
        throw Object.assign(new Error('The specified queue does not exist.'), { name: 'QueueDoesNotExist' });
      return url;
    },
  });
  const schedulerClient = new SchedulerClient({ endpoint: scheduler.url, region, credentials });
  await schedulerClient.send(new CreateScheduleGroupCommand({ Name: group }));
  await schedulerClient.send(
    new CreateScheduleCommand({
      Name: 'nightly-invoices',
      GroupName: group,
      ScheduleExpression: 'cron(0 23 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Berlin',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: {
        Arn: queue.arn,
        RoleArn: 'arn:aws:iam::000000000000:role/scheduler',
        Input: JSON.stringify({
          specversion: '1.0',
          id: 'nightly-invoices@<aws.scheduler.scheduled-time>',
          source: `/sqs-jobs/schedules/${group}`,
          type: 'billing.nightly-invoices',
          time: '<aws.scheduler.scheduled-time>',
          datacontenttype: 'application/json',
          data: options.nightlyData,
        }),
        ...(options.nightlyRetries
          ? {
              RetryPolicy: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 3 },
              DeadLetterConfig: { Arn: dlq.arn },
            }
          : {}),
      },
    }),
  );
  const client = new JobClient({
    source: options.source,
    queueUrls: { holds: holds.url },
    sqs: emulator.sqs,
    dynamodb: db.client,
    scheduler: schedulerClient,
    scheduling: {
      idempotencyTableName: tableName,
      queues: {
        holds: {
          groupName: group,
          roleArn: 'arn:aws:iam::000000000000:role/it',
          queueArn: holds.arn,
          // The schedule DLQ of the holds' one-time schedules (a standard queue, as Scheduler needs).
          deadLetterQueueArn: dlq.arn,
        },
      },
    },
  });
  return {
    emulator,
    db,
    tableName,
    queue,
    dlq,
    holds,
    scheduler,
    schedulerClient,
    client,
    async stop() {
      schedulerClient.destroy();
      await scheduler.stop();
      await Promise.all([emulator.stop(), db.stop()]);
    },
  };
}

/**
 * The real worker of the `billing` queue, running `billing.nightly-invoices` with `schema`; each
 * job it runs adds its id to `ran`.
 */
export function nightlyWorker(
  world: SchedulesWorld,
  options: { schema: z.ZodType<Record<string, unknown>>; handlerVersion: string; ran: string[] },
): WorkerHandler {
  const metrics = new Metrics({ namespace: 'SqsJobs' });
  metrics.clearDefaultDimensions();
  return createWorker({
    jobs: [
      defineJob({
        type: 'billing.nightly-invoices',
        queue: 'billing',
        schema: options.schema,
        async run(_data, ctx) {
          options.ran.push(ctx.jobId);
        },
      }),
    ],
    queueName: 'billing',
    queueUrl: world.queue.url,
    dlqUrl: world.dlq.url,
    handlerVersion: options.handlerVersion,
    idempotency: new DynamoIdempotencyStore({ tableName: world.tableName, client: world.db.client }),
    sqs: world.emulator.sqs,
    logger: new Logger({ logLevel: 'INFO' }),
    metrics,
    env: {},
  });
}

/**
 * Runs messages of the `billing` queue through `handler` (polls of the event source mapping:
 * `EmulatedSqs.deliver`) until `expected` have succeeded; throws when five polls in a row (about
 * 10 s) find the queue empty before.
 */
export async function runBillingQueue(
  world: SchedulesWorld,
  handler: WorkerHandler,
  expected: number,
): Promise<void> {
  let done = 0;
  let emptyPolls = 0;
  while (done < expected) {
    const { response, delivered } = await world.emulator.deliver(world.queue, handler);
    emptyPolls = delivered === 0 ? emptyPolls + 1 : 0;
    if (emptyPolls === 5) throw new Error(`only ${done} of ${expected} messages came`);
    done += delivered - response.batchItemFailures.length;
  }
}
