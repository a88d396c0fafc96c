/**
 * The worker's default Logger writes its batch summary line itself (lib/runtime/default-log-line.ts,
 * issue 21): the output must be what the Powertools Logger writes, byte for byte. Each case runs
 * the same batches through two workers, one on its default Logger (the direct line) and one
 * given a Logger built the same way (`createDefaultLogger`: every line through Powertools), and
 * compares all they wrote to stdout and stderr: log lines, EMF blobs, in order. The clock is
 * fixed, so timestamps and durations match.
 */
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { TransientError } from '../../lib/core/errors.ts';
import { DefaultLogLine } from '../../lib/runtime/default-log-line.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { createDefaultLogger } from '../../lib/runtime/telemetry.ts';
import { createWorker, type WorkerHandler } from '../../lib/runtime/worker.ts';
import { FakeSqs } from '../factories/fake-sqs.ts';
import { jobBody, lambdaContext, queueUrl, sqsEvent, sqsRecord } from '../factories/sqs.ts';

const NOW = Date.parse('2026-12-01T10:20:30.456Z');

const job = defineJob({
  type: 'orders.capture',
  queue: 'orders',
  schema: z.object({ orderId: z.string(), fail: z.boolean().optional() }),
  run: async ({ orderId, fail }) => {
    if (fail) throw new TransientError(`gateway busy for ${orderId}`);
    return { captured: orderId };
  },
});

function worker(logger: ReturnType<typeof createDefaultLogger> | undefined): WorkerHandler {
  return createWorker({
    jobs: [job],
    queueName: 'orders',
    queueUrl: queueUrl('orders'),
    dlqUrl: queueUrl('orders-dlq'),
    idempotency: false,
    sqs: new FakeSqs(),
    now: () => NOW,
    random: () => 0.5,
    ...(logger === undefined ? {} : { logger }),
  });
}

/** Two batches: three records that complete, then one that completes and one retried. */
function batches(): SQSEvent[] {
  const record = (i: number, fail = false) =>
    sqsRecord({
      queue: 'orders',
      messageId: `m-${i}`,
      body: jobBody(job.type, { orderId: `o-${i}`, ...(fail ? { fail } : {}) }, { id: `job-${i}` }),
    });
  return [sqsEvent([record(1), record(2), record(3)]), sqsEvent([record(4), record(5, true)])];
}

/** Everything `handler` writes to stdout and stderr over the batches, as bytes. */
async function output(handler: WorkerHandler, contexts: readonly object[]): Promise<string> {
  const chunks: string[] = [];
  const collect = (chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  };
  const spies = [
    vi.spyOn(process.stdout, 'write').mockImplementation(collect),
    vi.spyOn(process.stderr, 'write').mockImplementation(collect),
  ];
  try {
    for (const [i, event] of batches().entries()) {
      const context = { ...lambdaContext(), awsRequestId: `request-${i}`, ...contexts[i % contexts.length] };
      await handler(event, context as never);
    }
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return chunks.join('');
}

/** The same batches through the direct line and through Powertools, under `env`. */
async function bothWays(
  env: Record<string, string | undefined>,
  contexts: readonly object[] = [{}],
): Promise<{ direct: string; powertools: string }> {
  for (const [key, value] of Object.entries(env)) vi.stubEnv(key, value);
  // Both built under the same environment (the Logger reads it when built), each its own Logger.
  const direct = worker(undefined);
  const viaPowertools = worker(createDefaultLogger('orders'));
  const written = vi.spyOn(DefaultLogLine.prototype, 'info');
  const directOutput = await output(direct, contexts);
  // The direct line was used (not the Logger, which would make the comparison empty), once per batch.
  expect(written).toHaveBeenCalledTimes(2);
  written.mockClear();
  const powertoolsOutput = await output(viaPowertools, contexts);
  expect(written).not.toHaveBeenCalled();
  written.mockRestore();
  return { direct: directOutput, powertools: powertoolsOutput };
}

afterEach(() => {
  vi.unstubAllEnvs();
  vi.useRealTimers();
});

describe("the default Logger's summary line, written directly", () => {
  const quiet = {
    POWERTOOLS_DEV: undefined,
    TZ: undefined,
    POWERTOOLS_LOG_LEVEL: undefined,
    AWS_LAMBDA_MAX_CONCURRENCY: undefined,
  };

  it.each([
    ['default settings', {}],
    [
      'a service name, an X-Ray trace header, TZ of Lambda',
      {
        POWERTOOLS_SERVICE_NAME: 'billing',
        _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0',
        TZ: ':UTC',
      },
    ],
    [
      'an on-demand environment: a cold start on the first invocation only',
      {
        AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
      },
    ],
    [
      'provisioned concurrency: never a cold start',
      { AWS_LAMBDA_INITIALIZATION_TYPE: 'provisioned-concurrency' },
    ],
    ['debug sampling at rate 1: DEBUG lines too, sampling_rate 1', { POWERTOOLS_LOGGER_SAMPLE_RATE: '1' }],
    ['log level WARN: no summary line either way', { POWERTOOLS_LOG_LEVEL: 'WARN' }],
    ['log level DEBUG', { POWERTOOLS_LOG_LEVEL: 'DEBUG' }],
    ['a trace header that is a bare root', { _X_AMZN_TRACE_ID: '1-5759e988-bd862e3fe1be46a994272793' }],
  ])('is the Powertools line byte for byte: %s', async (_name, env) => {
    vi.useFakeTimers({ toFake: ['Date'], now: NOW });
    const { direct, powertools } = await bothWays({ ...quiet, ...env });
    const summaries = direct.split('"message":"batch processed"').length - 1;
    expect(summaries).toBe('POWERTOOLS_LOG_LEVEL' in env && env.POWERTOOLS_LOG_LEVEL === 'WARN' ? 0 : 2);
    expect(direct).toBe(powertools);
  });

  it('is the Powertools line byte for byte with a tenant and empty context fields (left out)', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: NOW });
    const contexts = [{ tenantId: 'tenant-7' }, { awsRequestId: '', functionName: undefined }];
    const { direct, powertools } = await bothWays(quiet, contexts);
    expect(direct).toContain('"tenant_id":"tenant-7"');
    expect(direct).toBe(powertools);
  });

  it('is not used where the Logger writes otherwise: POWERTOOLS_DEV, another time zone, persistent keys, invocations at once', () => {
    vi.stubEnv('POWERTOOLS_DEV', 'true');
    expect(DefaultLogLine.forDefaultLogger(createDefaultLogger('orders'))).toBeUndefined();
    vi.stubEnv('POWERTOOLS_DEV', undefined);
    vi.stubEnv('AWS_LAMBDA_MAX_CONCURRENCY', '4');
    expect(DefaultLogLine.forDefaultLogger(createDefaultLogger('orders'))).toBeUndefined();
    vi.stubEnv('AWS_LAMBDA_MAX_CONCURRENCY', undefined);
    vi.stubEnv('TZ', 'Europe/Paris');
    expect(DefaultLogLine.forDefaultLogger(createDefaultLogger('orders'))).toBeUndefined();
    vi.stubEnv('TZ', undefined);
    const keyed = createDefaultLogger('orders');
    keyed.appendPersistentKeys({ tenant: 'a' });
    expect(DefaultLogLine.forDefaultLogger(keyed)).toBeUndefined();
    expect(DefaultLogLine.forDefaultLogger(createDefaultLogger('orders'))).toBeInstanceOf(DefaultLogLine);
  });

  it('never throws when the line cannot be written', () => {
    const line = DefaultLogLine.forDefaultLogger(createDefaultLogger('orders'), () => {
      throw new Error('EPIPE');
    });
    line?.begin(lambdaContext());
    expect(() => line?.info('batch processed', { records: 1 })).not.toThrow();
  });
});
