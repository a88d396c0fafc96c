/**
 * Configuration: options over the environment contract (docs/contracts.md); mistakes in code
 * throw at once, mistakes in the environment fail every record of every event, never delete.
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PermanentError } from '../../lib/core/errors.ts';
import { readWorkerConfig } from '../../lib/runtime/config.ts';
import { createDefaultIdempotencyGuard } from '../../lib/runtime/default-guard.ts';
import { ALL_FEATURES } from '../../lib/runtime/features/all.ts';
import { featureSetOf, storeForFeatures } from '../../lib/runtime/features/feature.ts';
import { DynamoLeaseStore } from '../../lib/runtime/idempotency/lease-store.ts';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { WorkerConfigError } from '../../lib/runtime/worker-errors.ts';
import { FakeSqs } from '../factories/fake-sqs.ts';
import { jobBody, lambdaContext, queueUrl, sqsEvent, sqsRecord } from '../factories/sqs.ts';
import { captureOutput, failedIds } from '../factories/worker.ts';

const schema = z.object({ id: z.string() });
let runs = 0;
const job = defineJob({ type: 'mail.send', queue: 'notifications', schema, run: async () => void runs++ });
const failing = defineJob({
  type: 'mail.bounce',
  queue: 'notifications',
  schema,
  run: async () => {
    throw new PermanentError('bounced');
  },
});

const fullEnv = {
  JOBS_QUEUE_NAME: 'notifications',
  JOBS_QUEUE_URL: queueUrl('notifications'),
  JOBS_DLQ_URL: queueUrl('notifications-dlq'),
};
const silent = () => new Logger({ logLevel: 'SILENT' });
const records = () => [
  sqsRecord({ body: jobBody('mail.send', { id: '1' }) }),
  sqsRecord({ body: jobBody('mail.send', { id: '2' }) }),
];

async function invoke(handler: ReturnType<typeof createWorker>, recs = records()) {
  const { value, lines } = await captureOutput(() => handler(sqsEvent(recs), lambdaContext()));
  return { response: value, lines, recs };
}

describe('mistakes in code throw from createWorker', () => {
  it.each([
    {
      name: 'duplicate job types',
      options: { jobs: [job, job] },
      message: /two jobs have the type "mail.send"/,
    },
    { name: 'no jobs', options: { jobs: [] }, message: /at least one job/ },
    { name: 'maxConcurrency 0', options: { jobs: [job], maxConcurrency: 0 }, message: /maxConcurrency/ },
    {
      name: 'fractional maxConcurrency',
      options: { jobs: [job], maxConcurrency: 2.5 },
      message: /maxConcurrency/,
    },
    {
      name: 'a hand-built job object (not from defineJob)',
      options: { jobs: [{ type: 'orders.x', run: async () => {} } as unknown as typeof job] },
      message: /jobs\[0\] is not a job made by defineJob/,
    },
    {
      name: 'negative deadline margin',
      options: { jobs: [job], deadlineMarginMs: -1 },
      message: /deadlineMarginMs/,
    },
  ])('$name', ({ options, message }) => {
    expect(() => createWorker({ ...options, idempotency: false, env: fullEnv, logger: silent() })).toThrow(
      WorkerConfigError,
    );
    expect(() => createWorker({ ...options, idempotency: false, env: fullEnv, logger: silent() })).toThrow(
      message,
    );
  });
});

describe('the logger option', () => {
  it('refuses what is not a Powertools Logger (console, from JavaScript) when the worker is made, naming what it lacks and what to pass', () => {
    const make = (logger: unknown) => () =>
      createWorker({ jobs: [job], idempotency: false, env: fullEnv, logger: logger as Logger });
    expect(make(console)).toThrow(WorkerConfigError);
    expect(make(console)).toThrow(
      "invalid worker configuration: logger must be a Powertools Logger (new Logger() from @aws-lambda-powertools/logger), or left out for the worker's own; the given one has no refreshSampleRateCalculation, addContext, logEventIfEnabled, clearBuffer, resetKeys",
    );
    expect(make(null)).toThrow(
      /logger must be a Powertools Logger .* has no debug, info, warn, error, refresh/,
    );
  });

  it('takes a Powertools Logger, and runs its records', async () => {
    const handler = createWorker({
      jobs: [job],
      idempotency: false,
      env: fullEnv,
      logger: silent(),
      sqs: new FakeSqs(),
    });
    const { response } = await invoke(handler);
    expect(response.batchItemFailures).toEqual([]);
  });
});

it('refuses missing options with a message saying what it needs', () => {
  expect(() => createWorker(undefined as unknown as Parameters<typeof createWorker>[0])).toThrow(
    /createWorker needs options \{ jobs: \[\.\.\.\] \}/,
  );
});

describe('mistakes in the environment fail every record, run nothing, delete nothing', () => {
  it.each([{ missing: 'JOBS_QUEUE_URL' }, { missing: 'JOBS_DLQ_URL' }, { missing: 'JOBS_QUEUE_NAME' }])(
    '$missing unset',
    async ({ missing }) => {
      const env: Record<string, string> = { ...fullEnv };
      delete env[missing];
      runs = 0;
      const handler = createWorker({ jobs: [job], idempotency: false, env, sqs: new FakeSqs() });
      const { response, lines, recs } = await invoke(handler);
      expect(failedIds(response)).toEqual(recs.map((r) => r.messageId));
      expect(runs).toBe(0);
      expect(lines.some((l) => l.level === 'ERROR' && JSON.stringify(l).includes(missing))).toBe(true);
    },
  );

  it('refuses to run unguarded when JOBS_IDEMPOTENCY_TABLE is unset and idempotency is not switched off', async () => {
    runs = 0;
    const handler = createWorker({ jobs: [job], env: fullEnv, sqs: new FakeSqs() });
    const { response, lines, recs } = await invoke(handler);
    expect(failedIds(response)).toEqual(recs.map((r) => r.messageId));
    expect(runs).toBe(0);
    expect(lines.some((l) => JSON.stringify(l).includes('JOBS_IDEMPOTENCY_TABLE is not set'))).toBe(true);
  });

  it('keeps failing on every invocation (the error is not forgotten after the first)', async () => {
    const handler = createWorker({ jobs: [job], idempotency: false, env: {}, sqs: new FakeSqs() });
    await invoke(handler);
    const { response, recs } = await invoke(handler);
    expect(failedIds(response)).toEqual(recs.map((r) => r.messageId));
  });
});

describe('a batch failed outside any record is counted: SqsJobs/BatchFailed (Queue)', () => {
  /** Metrics that print EMF to stdout like the worker's default ones (namespace SqsJobs, no default dimension). */
  const powertoolsWarnings: string[] = [];
  const record = (...args: unknown[]) => powertoolsWarnings.push(args.join(' '));
  const emfMetrics = () => {
    const metrics = new Metrics({
      namespace: 'SqsJobs',
      logger: { debug: record, info: record, warn: record, error: record },
    });
    metrics.clearDefaultDimensions();
    return metrics;
  };
  const emfOf = (lines: Record<string, unknown>[]) => lines.filter((l) => '_aws' in l);

  it('on a configuration error (no idempotency table), once per invocation, with the Queue dimension', async () => {
    const handler = createWorker({
      jobs: [job],
      env: fullEnv,
      sqs: new FakeSqs(),
      logger: silent(),
      metrics: emfMetrics(),
    });
    for (let i = 0; i < 2; i++) {
      const { response, lines, recs } = await invoke(handler);
      expect(failedIds(response)).toEqual(recs.map((r) => r.messageId));
      const emf = emfOf(lines);
      expect(emf).toHaveLength(1);
      const aws = emf[0]!._aws as {
        CloudWatchMetrics: {
          Namespace: string;
          Dimensions: string[][];
          Metrics: { Name: string; Unit: string }[];
        }[];
      };
      expect(aws.CloudWatchMetrics).toEqual([
        { Namespace: 'SqsJobs', Dimensions: [['Queue']], Metrics: [{ Name: 'BatchFailed', Unit: 'Count' }] },
      ]);
      expect(emf[0]).toMatchObject({ Queue: 'notifications', BatchFailed: 1 });
    }
    expect(powertoolsWarnings).toEqual([]); // none on the warm second invocation either
  });

  it("names the queue from the options when the environment lacks it, else 'unknown'", async () => {
    const noName = { JOBS_QUEUE_URL: fullEnv.JOBS_QUEUE_URL, JOBS_DLQ_URL: fullEnv.JOBS_DLQ_URL };
    const named = createWorker({
      jobs: [job],
      idempotency: false,
      queueName: 'mail',
      queueUrl: '',
      env: {},
      sqs: new FakeSqs(),
      logger: silent(),
      metrics: emfMetrics(),
    });
    expect(emfOf((await invoke(named)).lines)[0]).toMatchObject({ Queue: 'mail', BatchFailed: 1 });
    const anonymous = createWorker({
      jobs: [job],
      idempotency: false,
      env: noName,
      sqs: new FakeSqs(),
      logger: silent(),
      metrics: emfMetrics(),
    });
    expect(emfOf((await invoke(anonymous)).lines)[0]).toMatchObject({ Queue: 'unknown', BatchFailed: 1 });
  });

  it('is not emitted when records fail one by one (those are JobRetried / JobDeadLettered)', async () => {
    const handler = createWorker({
      jobs: [failing],
      idempotency: false,
      env: fullEnv,
      sqs: new FakeSqs(),
      logger: silent(),
      metrics: emfMetrics(),
    });
    const { lines } = await invoke(handler, [sqsRecord({ body: jobBody('mail.bounce', { id: '1' }) })]);
    const emf = emfOf(lines);
    expect(emf.length).toBeGreaterThan(0);
    expect(emf.some((blob) => 'BatchFailed' in blob)).toBe(false);
  });
});

describe('errors outside any record', () => {
  it('are thrown, not answered with an empty list, when the event names no record', async () => {
    const handler = createWorker({ jobs: [job], idempotency: false, env: fullEnv, sqs: new FakeSqs() });
    const malformed = {} as unknown as SQSEvent;
    await expect(captureOutput(() => handler(malformed, lambdaContext()))).rejects.toThrow();
  });
});

describe('default idempotency guard', () => {
  it("is the DynamoDB store on JOBS_IDEMPOTENCY_TABLE: with parked groups, jobs sent for later and batches for sqs-jobs' worker (every feature), the core store for a worker without those features", () => {
    const guard = createDefaultIdempotencyGuard(
      'jobs-idempotency',
      storeForFeatures(featureSetOf(ALL_FEATURES).set),
    );
    expect(guard).toBeInstanceOf(DynamoIdempotencyStore);
    expect((guard as DynamoIdempotencyStore).tableName).toBe('jobs-idempotency');
    const core = createDefaultIdempotencyGuard('jobs-idempotency', storeForFeatures({}));
    expect(core).toBeInstanceOf(DynamoLeaseStore);
    expect(core).not.toBeInstanceOf(DynamoIdempotencyStore);
    expect((core as DynamoLeaseStore).tableName).toBe('jobs-idempotency');
  });

  it('is refused without a table name', () => {
    expect(() => createDefaultIdempotencyGuard(undefined)).toThrow(WorkerConfigError);
  });
});

describe('configuration from the environment', () => {
  it('uses JOBS_DLQ_URL and JOBS_HANDLER_VERSION when no option overrides them', async () => {
    const sqs = new FakeSqs();
    const handler = createWorker({
      jobs: [failing],
      idempotency: false,
      env: { ...fullEnv, JOBS_HANDLER_VERSION: 'build-123' },
      sqs,
      logger: silent(),
    });
    await invoke(handler, [sqsRecord({ body: jobBody('mail.bounce', { id: '1' }) })]);
    const [sent] = sqs.sentTo(fullEnv.JOBS_DLQ_URL);
    expect(sent?.MessageAttributes?.HandlerVersion?.StringValue).toBe('build-123');
  });

  it('lets options win over the environment', () => {
    const read = readWorkerConfig(
      { queueName: 'opt', dlqUrl: 'https://dlq.example/opt', handlerVersion: 'v-opt' },
      { ...fullEnv, JOBS_HANDLER_VERSION: 'v-env' },
    );
    expect(read).toEqual({
      ok: true,
      config: {
        queueName: 'opt',
        queueUrl: fullEnv.JOBS_QUEUE_URL,
        dlqUrl: 'https://dlq.example/opt',
        handlerVersion: 'v-opt',
        idempotencyTable: undefined,
        queueLimits: { maxAttempts: undefined, jobTimeoutSeconds: undefined },
      },
    });
  });

  it.each([
    { env: { AWS_LAMBDA_FUNCTION_VERSION: '12' }, expected: '12' },
    { env: { JOBS_HANDLER_VERSION: 'abc', AWS_LAMBDA_FUNCTION_VERSION: '12' }, expected: 'abc' },
    { env: {}, expected: 'unknown' },
  ])('handler version from $env → $expected', ({ env, expected }) => {
    const read = readWorkerConfig({}, { ...fullEnv, ...env });
    expect(read.ok && read.config.handlerVersion).toBe(expected);
  });

  it('reports every missing variable at once', () => {
    const read = readWorkerConfig({}, {});
    expect(read.ok).toBe(false);
    expect(!read.ok && read.problems).toHaveLength(3);
  });
});
