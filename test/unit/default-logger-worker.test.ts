/**
 * The worker's default logger (lib/runtime/default-logger.ts, issue 21) writes its batch summary
 * line as one string: the output must be what the Powertools Logger writes, byte for byte. Each
 * case runs the same batches through two workers, one on its default logger and one given a
 * Powertools Logger built as the worker built its default before (`new Logger({ serviceName })`:
 * every line through Powertools), and compares all they wrote to stdout and stderr: log lines,
 * EMF blobs, in order. The clock is fixed, so timestamps and durations match.
 * test/unit/default-logger.test.ts compares every other line the default logger writes.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { TransientError } from '../../lib/core/errors.ts';
import { DefaultLogger } from '../../lib/runtime/default-logger.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { createWorker, type WorkerHandler } from '../../lib/runtime/worker.ts';
import { FakeSqs } from '../factories/fake-sqs.ts';
import { jobBody, lambdaContext, queueUrl, sqsEvent, sqsRecord } from '../factories/sqs.ts';
import { captureText } from '../factories/worker.ts';

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

/** A Powertools Logger as the worker built its default one before it had its own. */
function powertoolsLogger(): Logger {
  return new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'sqs-jobs-orders' });
}

function worker(logger: Logger | undefined): WorkerHandler {
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
  const { text } = await captureText(async () => {
    for (const [i, event] of batches().entries()) {
      const context = { ...lambdaContext(), awsRequestId: `request-${i}`, ...contexts[i % contexts.length] };
      await handler(event, context as never);
    }
  });
  return text;
}

/** The same batches through the direct line and through Powertools, under `env`. */
async function bothWays(
  env: Record<string, string | undefined>,
  contexts: readonly object[] = [{}],
): Promise<{ direct: string; powertools: string }> {
  for (const [key, value] of Object.entries(env)) vi.stubEnv(key, value);
  // Both built under the same environment (the Logger reads it when built), each its own Logger.
  const direct = worker(undefined);
  const viaPowertools = worker(powertoolsLogger());
  const written = vi.spyOn(DefaultLogger.prototype, 'summary');
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

describe("the default logger's summary line, written as one string", () => {
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
    ['another time zone (the general line)', { TZ: 'Europe/Paris' }],
    ['an empty service name', { POWERTOOLS_SERVICE_NAME: '' }],
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

  it('never throws when the line cannot be written', () => {
    const logger = new DefaultLogger('sqs-jobs-orders');
    logger.begin({}, lambdaContext());
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => {
      throw new Error('EPIPE');
    });
    try {
      expect(() => logger.summary('batch processed', { records: 1 })).not.toThrow();
      expect(write).toHaveBeenCalledTimes(1);
    } finally {
      write.mockRestore();
    }
  });
});
