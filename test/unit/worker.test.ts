/**
 * createWorker on standard queues: response shape, malformed records, classified failures,
 * backoff visibility, dead-lettering with evidence, logs and metrics.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PermanentError, TransientError } from '../../lib/core/errors.ts';
import { deadLetterDeduplicationId } from '../../lib/runtime/dead-letter.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { jobBody, sqsRecord } from '../factories/sqs.ts';
import { failedIds, HANDLER_VERSION, workerHarness } from '../factories/worker.ts';

const schema = z.object({ orderId: z.string() });

/** A job of type `orders.capture` whose run is the given function. */
function captureJob(
  run: (data: { orderId: string }) => Promise<unknown>,
  retry: { maxAttempts?: number; baseDelaySeconds?: number; maxDelaySeconds?: number } = {},
) {
  return defineJob({ type: 'orders.capture', queue: 'jobs', schema, retry, run: (data) => run(data) });
}

const good = (orderId: string, receiveCount = 1) =>
  sqsRecord({ body: jobBody('orders.capture', { orderId }), receiveCount });

describe('batch response', () => {
  it('is exactly { batchItemFailures: [] } when every record succeeds', async () => {
    const ran: string[] = [];
    const h = workerHarness({ jobs: [captureJob(async ({ orderId }) => ran.push(orderId))] });
    const { response } = await h.invoke([good('o1'), good('o2'), good('o3')]);
    expect(response).toStrictEqual({ batchItemFailures: [] });
    expect(ran.sort()).toEqual(['o1', 'o2', 'o3']);
  });

  it('names exactly the failed records of this event by messageId, nothing else', async () => {
    const h = workerHarness({
      jobs: [
        captureJob(async ({ orderId }) => {
          if (orderId.startsWith('bad')) throw new TransientError('upstream 503');
        }),
      ],
    });
    const records = [good('ok-1'), good('bad-1'), good('ok-2'), good('bad-2')];
    const { response } = await h.invoke(records);
    expect(response).toStrictEqual({
      batchItemFailures: [
        { itemIdentifier: records[1]?.messageId },
        { itemIdentifier: records[3]?.messageId },
      ],
    });
  });
});

describe('malformed records fail alone and go to the DLQ with the body unchanged', () => {
  const cases = [
    { name: 'bad JSON', body: '{"specversion": "1.0", oops', errorName: 'EnvelopeError', jobType: undefined },
    {
      name: 'JSON that is not an envelope',
      body: '{"hello":"world"}',
      errorName: 'EnvelopeError',
      jobType: undefined,
    },
    {
      name: 'unknown job type',
      body: jobBody('orders.refund', { orderId: 'x' }),
      errorName: 'UnknownJobTypeError',
      jobType: 'orders.refund',
    },
    {
      name: 'data failing the schema',
      body: jobBody('orders.capture', { orderId: 42 }),
      errorName: 'JobDataInvalidError',
      jobType: 'orders.capture',
    },
  ];

  it.each(cases)('$name', async ({ body, errorName, jobType }) => {
    const ran: string[] = [];
    const h = workerHarness({ jobs: [captureJob(async ({ orderId }) => ran.push(orderId))] });
    const bad = sqsRecord({ body });
    const { response } = await h.invoke([good('before'), bad, good('after')]);

    expect(response.batchItemFailures).toEqual([]);
    expect(ran.sort()).toEqual(['after', 'before']);
    const sent = h.sqs.sentTo(h.dlqUrl);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.MessageBody).toBe(body);
    expect(sent[0]?.MessageAttributes?.ErrorName?.StringValue).toBe(errorName);
    expect(sent[0]?.MessageAttributes?.SourceMessageId?.StringValue).toBe(bad.messageId);
    expect(sent[0]?.MessageAttributes?.JobType?.StringValue).toBe(jobType);
    expect(h.sqs.visibilityChanges()).toEqual([]);
  });

  it('names the schema findings in the evidence', async () => {
    const h = workerHarness({ jobs: [captureJob(async () => {})] });
    await h.invoke([sqsRecord({ body: jobBody('orders.capture', { orderId: 42 }) })]);
    expect(h.sqs.sentTo(h.dlqUrl)[0]?.MessageAttributes?.ErrorMessage?.StringValue).toMatch(/orderId/);
  });
});

describe('transient failure: reported failed, visible again after the backoff', () => {
  // Full jitter: delay = floor(random * (ceiling + 1)) with ceiling = min(max, base * 2^(attempt-1)).
  const cases = [
    { attempt: 1, random: 0.9999, expected: 2 },
    { attempt: 2, random: 0.9999, expected: 4 },
    { attempt: 3, random: 0.9999, expected: 8 },
    { attempt: 3, random: 0, expected: 0 },
    { attempt: 3, random: 0.5, expected: 4 },
    { attempt: 9, random: 0.9999, expected: 300 },
  ];
  it.each(cases)('attempt $attempt, random $random → $expected s', async ({ attempt, random, expected }) => {
    const h = workerHarness({
      random: () => random,
      jobs: [
        captureJob(
          async () => {
            throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
          },
          { maxAttempts: 10, baseDelaySeconds: 2, maxDelaySeconds: 300 },
        ),
      ],
    });
    const record = good('o1', attempt);
    const { response } = await h.invoke([record]);
    expect(failedIds(response)).toEqual([record.messageId]);
    expect(h.sqs.visibilityChanges()).toEqual([
      { QueueUrl: h.queueUrl, ReceiptHandle: record.receiptHandle, VisibilityTimeout: expected },
    ]);
    expect(h.sqs.sentTo(h.dlqUrl)).toEqual([]);
  });

  it('keeps every delay within [0, base * 2^(attempt-1)] with real jitter', async () => {
    const h = workerHarness({
      jobs: [
        captureJob(
          async () => {
            throw new TransientError('throttled');
          },
          { maxAttempts: 10, baseDelaySeconds: 3 },
        ),
      ],
    });
    const records = Array.from({ length: 40 }, (_, i) => good(`o${i}`, 3));
    await h.invoke(records);
    const delays = h.sqs.visibilityChanges().map((c) => c.VisibilityTimeout ?? -1);
    expect(delays).toHaveLength(40);
    for (const delay of delays) {
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(12);
    }
    expect(new Set(delays).size).toBeGreaterThan(1);
  });

  it('waits at least what a Retry-After asked for', async () => {
    const h = workerHarness({
      random: () => 0,
      jobs: [
        captureJob(async () => {
          throw new TransientError('429', { retryAfterMs: 30_500 });
        }),
      ],
    });
    await h.invoke([good('o1')]);
    expect(h.sqs.visibilityChanges()[0]?.VisibilityTimeout).toBe(31);
  });

  it('still reports the record failed when ChangeMessageVisibility fails, and logs it', async () => {
    const h = workerHarness({
      jobs: [
        captureJob(async () => {
          throw new TransientError('timeout');
        }),
      ],
    });
    h.sqs.failWhen((call) =>
      call.action === 'ChangeMessageVisibility'
        ? new Error('AccessDenied: sqs:ChangeMessageVisibility')
        : undefined,
    );
    const record = good('o1');
    const { response, logs } = await h.invoke([record]);
    expect(failedIds(response)).toEqual([record.messageId]);
    expect(
      logs.some((l) => l.level === 'WARN' && String(l.message).includes('ChangeMessageVisibility')),
    ).toBe(true);
  });
});

describe('attempts used up → dead-lettered instead of retried', () => {
  const cases = [
    { receiveCount: 2, deadLettered: false },
    { receiveCount: 3, deadLettered: true },
    { receiveCount: 7, deadLettered: true },
  ];
  it.each(cases)(
    'maxAttempts 3, attempt $receiveCount → dead-lettered: $deadLettered',
    async ({ receiveCount, deadLettered }) => {
      const h = workerHarness({
        jobs: [
          captureJob(
            async () => {
              throw Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' });
            },
            { maxAttempts: 3 },
          ),
        ],
      });
      const record = good('o1', receiveCount);
      const { response } = await h.invoke([record]);
      const sent = h.sqs.sentTo(h.dlqUrl);
      if (deadLettered) {
        expect(response.batchItemFailures).toEqual([]);
        expect(sent).toHaveLength(1);
        expect(sent[0]?.MessageAttributes?.ErrorReason?.StringValue).toBe('attempts-used-up: ETIMEDOUT');
        expect(sent[0]?.MessageAttributes?.Attempts).toEqual({
          DataType: 'Number',
          StringValue: String(receiveCount),
        });
        expect(h.sqs.visibilityChanges()).toEqual([]);
      } else {
        expect(failedIds(response)).toEqual([record.messageId]);
        expect(sent).toEqual([]);
      }
    },
  );
});

describe('permanent failure → dead-lettered at once with evidence', () => {
  it('writes exactly the contract attributes and keeps the body byte for byte', async () => {
    const now = Date.parse('2026-11-29T08:00:00.000Z');
    const firstReceive = Date.parse('2026-11-29T07:00:00.000Z');
    const h = workerHarness({
      now: () => now,
      jobs: [
        captureJob(async () => {
          throw new PermanentError('order o-ü not found', { cause: new Error('404 from orders API') });
        }),
      ],
    });
    const body = jobBody('orders.capture', { orderId: 'o-ü ✓' }, { id: 'job-1' });
    const record = sqsRecord({ body, receiveCount: 2, firstReceiveMs: firstReceive });
    const { response } = await h.invoke([record]);

    expect(response.batchItemFailures).toEqual([]);
    const [sent] = h.sqs.sentTo(h.dlqUrl);
    expect(sent?.MessageBody).toBe(body);
    expect(sent?.MessageGroupId).toBeUndefined();
    const attributes = sent?.MessageAttributes ?? {};
    expect(Object.keys(attributes).sort()).toEqual(
      [
        'Attempts',
        'ErrorMessage',
        'ErrorName',
        'ErrorReason',
        'ErrorStack',
        'FirstFailureAt',
        'HandlerVersion',
        'JobType',
        'LastFailureAt',
        'SourceMessageId',
      ].sort(),
    );
    expect(attributes).toMatchObject({
      JobType: { DataType: 'String', StringValue: 'orders.capture' },
      ErrorName: { DataType: 'String', StringValue: 'PermanentError' },
      ErrorMessage: { DataType: 'String', StringValue: 'order o-ü not found' },
      ErrorReason: { DataType: 'String', StringValue: 'PermanentError' },
      Attempts: { DataType: 'Number', StringValue: '2' },
      FirstFailureAt: { DataType: 'String', StringValue: '2026-11-29T07:00:00.000Z' },
      LastFailureAt: { DataType: 'String', StringValue: '2026-11-29T08:00:00.000Z' },
      HandlerVersion: { DataType: 'String', StringValue: HANDLER_VERSION },
      SourceMessageId: { DataType: 'String', StringValue: record.messageId },
    });
    expect(attributes.ErrorStack?.StringValue).toMatch(/PermanentError: order o-ü not found/);
    expect(attributes.ErrorStack?.StringValue).toMatch(/Caused by: Error: 404 from orders API/);
  });

  it('treats an HTTP 404 from a fetch wrapper as permanent on the first attempt', async () => {
    const h = workerHarness({
      jobs: [
        captureJob(async () => {
          throw Object.assign(new Error('Not Found'), { status: 404 });
        }),
      ],
    });
    await h.invoke([good('o1')]);
    expect(h.sqs.sentTo(h.dlqUrl)[0]?.MessageAttributes?.ErrorReason?.StringValue).toBe('HTTP 404');
  });

  it('keeps the MessageGroupId on a FIFO DLQ with a dedup id from the messageId', async () => {
    const h = workerHarness({
      fifo: true,
      jobs: [
        captureJob(async () => {
          throw new PermanentError('nope');
        }),
      ],
    });
    const record = sqsRecord({ body: jobBody('orders.capture', { orderId: 'o1' }), groupId: 'user-7' });
    await h.invoke([record]);
    const [sent] = h.sqs.sentTo(h.dlqUrl);
    expect(sent?.MessageGroupId).toBe('user-7');
    expect(sent?.MessageDeduplicationId).toBe(deadLetterDeduplicationId(record.messageId));
    expect(sent?.MessageDeduplicationId).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reports the record failed when the DLQ send fails: never lost', async () => {
    const h = workerHarness({
      jobs: [
        captureJob(async () => {
          throw new PermanentError('bad order');
        }),
      ],
    });
    h.sqs.failWhen((call) =>
      call.action === 'SendMessage'
        ? Object.assign(new Error('service unavailable'), { $fault: 'server' })
        : undefined,
    );
    const record = good('o1');
    const { response, emf } = await h.invoke([record]);
    expect(failedIds(response)).toEqual([record.messageId]);
    expect(h.sqs.visibilityChanges()).toHaveLength(1);
    expect(emf.some((blob) => 'JobDeadLettered' in blob)).toBe(false);
  });
});

describe('logs and metrics', () => {
  // The default changed on purpose (issue 10): a success line per record was 38 % of the
  // worker's CPU per record; a batch summary at INFO plus every failure is the default, the
  // per-record line is one setting away (logEachRecord / JOBS_LOG_EACH_RECORD, or DEBUG).
  it('logs one summary line per batch at INFO by default, and no line per completed record', async () => {
    const h = workerHarness({
      jobs: [
        captureJob(async ({ orderId }) => {
          if (orderId === 'fail') throw new TransientError('503');
          if (orderId === 'perm') throw new PermanentError('gone');
          return 'ok';
        }),
      ],
      logger: new Logger({ serviceName: 'sqs-jobs-test', logLevel: 'INFO' }),
    });
    const { logs } = await h.invoke([good('a'), good('b'), good('fail'), good('perm')]);
    expect(logs.filter((line) => line.message === 'job completed')).toEqual([]);
    expect(logs.filter((line) => line.message === 'batch processed')).toEqual([
      expect.objectContaining({
        level: 'INFO',
        outcome: 'batch',
        records: 4,
        completed: 2,
        duplicates: 0,
        deadLettered: 1,
        retried: 1,
        durationMs: expect.any(Number),
      }),
    ]);
    // Failures are still logged one by one, with the job's identity.
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'WARN',
        outcome: 'retry',
        jobType: 'orders.capture',
        jobId: expect.any(String),
      }),
    );
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 'ERROR', outcome: 'dead-lettered', jobType: 'orders.capture' }),
    );
  });

  for (const [how, extra] of [
    ['logEachRecord: true', { logEachRecord: true }],
    ['JOBS_LOG_EACH_RECORD=true', { env: { JOBS_LOG_EACH_RECORD: 'true' } }],
  ] as const) {
    it(`logs one structured entry per completed record at INFO with ${how}`, async () => {
      const h = workerHarness({
        jobs: [captureJob(async () => 'ok')],
        logger: new Logger({ serviceName: 'sqs-jobs-test', logLevel: 'INFO' }),
        ...extra,
      });
      const record = sqsRecord({
        body: jobBody('orders.capture', { orderId: 'o1' }, { id: 'job-77' }),
        receiveCount: 2,
      });
      const { logs } = await h.invoke([record]);
      expect(logs).toContainEqual(
        expect.objectContaining({
          level: 'INFO',
          message: 'job completed',
          jobType: 'orders.capture',
          jobId: 'job-77',
          messageId: record.messageId,
          attempt: 2,
          outcome: 'completed',
        }),
      );
    });
  }

  it('logs the entry per completed record at DEBUG when the log level is DEBUG', async () => {
    const h = workerHarness({
      jobs: [captureJob(async () => 'ok')],
      logger: new Logger({ serviceName: 'sqs-jobs-test', logLevel: 'DEBUG' }),
    });
    const record = sqsRecord({ body: jobBody('orders.capture', { orderId: 'o1' }, { id: 'job-78' }) });
    const { logs } = await h.invoke([record]);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'DEBUG',
        message: 'job completed',
        jobType: 'orders.capture',
        jobId: 'job-78',
        messageId: record.messageId,
        attempt: 1,
        outcome: 'completed',
      }),
    );
  });

  it('emits EMF with dimension sets [Queue] and [Queue, JobType] per job type', async () => {
    const other = defineJob({ type: 'orders.notify', queue: 'jobs', schema, run: async () => {} });
    const h = workerHarness({
      jobs: [
        captureJob(async ({ orderId }) => {
          if (orderId === 'fail') throw new TransientError('503');
          if (orderId === 'perm') throw new PermanentError('gone');
        }),
        other,
      ],
    });
    const { emf } = await h.invoke([
      good('a'),
      good('b'),
      good('fail'),
      good('perm'),
      sqsRecord({ body: jobBody('orders.notify', { orderId: 'n' }) }),
      sqsRecord({ body: 'garbage' }),
      sqsRecord({ body: jobBody('orders.no-such-type', { orderId: 'x' }) }),
    ]);
    // Counts of a type summed over its blobs (each dead letter has its own, written when it was sent).
    const byType = new Map<unknown, Record<string, unknown>>();
    for (const blob of emf) {
      const sum = byType.get(blob.JobType) ?? {};
      for (const [name, value] of Object.entries(blob)) {
        sum[name] = typeof value === 'number' && typeof sum[name] === 'number' ? sum[name] + value : value;
      }
      byType.set(blob.JobType, sum);
    }
    for (const blob of emf) {
      const aws = blob._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][] }[] };
      expect(aws.CloudWatchMetrics[0]?.Namespace).toBe('SqsJobs');
      expect(aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['Queue'], ['Queue', 'JobType']]);
      expect(blob.Queue).toBe('jobs');
    }
    expect(byType.get('orders.capture')).toMatchObject({
      JobCompleted: 2,
      JobRetried: 1,
      JobDeadLettered: 1,
    });
    expect(byType.get('orders.capture')?.JobDuration).toHaveLength(4);
    expect(byType.get('orders.notify')).toMatchObject({ JobCompleted: 1 });
    // Unrouted types are not dimension values (each would be a new metric): they count as `unknown`.
    expect(byType.get('unknown')).toMatchObject({ JobDeadLettered: 2 });
    expect(byType.has('orders.no-such-type')).toBe(false);
  });

  it('prints no Powertools warning on later invocations of a warm worker', async () => {
    const warnings: string[] = [];
    const record = (...args: unknown[]) => warnings.push(args.join(' '));
    const metrics = new Metrics({
      namespace: 'SqsJobs',
      logger: { debug: record, info: record, warn: record, error: record },
    });
    metrics.clearDefaultDimensions();
    const h = workerHarness({ jobs: [captureJob(async () => {})], metrics });
    for (let i = 0; i < 3; i++) await h.invoke([good(`order-${i}`)]);
    expect(warnings).toEqual([]);
  });
});
