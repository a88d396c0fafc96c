/**
 * `ctx.logger` (lib/runtime/job-logger.ts) as a job's author and an operator see it, through a
 * worker on its default logger and through one given a Powertools Logger: an Error logged as
 * Powertools logs it (under `error`: name, location, message, stack, cause), a string under
 * `extra`, and the runtime's keys (identity, lineage, Lambda context) kept on every line, a job's
 * key of one of those names dropped with Powertools' reserved-key warning at each call, as
 * Powertools warns for its own reserved keys.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { JobLogger } from '../../lib/core/logger.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { runJob } from '../../lib/testing/run-job.ts';
import { FakeSqs } from '../factories/fake-sqs.ts';
import { jobBody, lambdaContext, queueUrl, sqsEvent, sqsRecord } from '../factories/sqs.ts';
import { captureText } from '../factories/worker.ts';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const LINEAGE = {
  correlationid: 'order-42',
  causationid: 'parent-1',
  rootid: 'root-1',
  traceparent: TRACEPARENT,
};

/** What the job logs, by name: each is one thing a user writes. */
const SCRIPTS: Record<string, (logger: JobLogger) => void> = {
  error: (logger) => {
    const cause = new Error('socket hang up');
    logger.error('charge failed', Object.assign(new TypeError('card declined', { cause }), { code: 'E42' }));
  },
  string: (logger) => logger.warn('charge retried', 'card declined'),
  forged: (logger) => {
    logger.info('charged', {
      jobId: 'other',
      messageId: 'forged',
      invoiceId: 'inv-7',
      correlationId: 'someone-else',
      rootJobId: null,
      function_request_id: 'mine',
    });
    logger.info('charged again', { jobId: 'other', amountCents: 1200 });
  },
  throwing: (logger) => {
    logger.info('odd keys', {
      get boom(): string {
        throw new RangeError('getter failed');
      },
    });
  },
  debugForged: (logger) => logger.debug('detail', { jobId: 'other' }),
  javascript: (logger) => {
    // From JavaScript (no types): several objects and an Error, as Powertools takes them.
    const loose = logger.info as (this: JobLogger, message: string, ...extra: unknown[]) => void;
    loose.call(logger, 'mixed', { a: 1 }, null, { b: 2, jobType: 'x' }, new Error('late'));
  },
};

const job = defineJob({
  type: 'billing.charge',
  queue: 'billing',
  schema: z.object({ script: z.string() }),
  run: async ({ script }, ctx) => {
    SCRIPTS[script]?.(ctx.logger);
  },
});

type Line = Record<string, unknown>;

/** The lines a worker (default logger, or the given Powertools Logger) writes for one `script`. */
async function linesOf(script: string, logger?: Logger): Promise<Line[]> {
  const handler = createWorker({
    jobs: [job],
    queueName: 'billing',
    queueUrl: queueUrl('billing'),
    dlqUrl: queueUrl('billing-dlq'),
    idempotency: false,
    sqs: new FakeSqs(),
    ...(logger === undefined ? {} : { logger }),
  });
  const record = sqsRecord({
    queue: 'billing',
    messageId: 'm-1',
    body: jobBody(job.type, { script }, { id: 'job-1', lineage: LINEAGE }),
  });
  const { text } = await captureText(async () => {
    await handler(sqsEvent([record]), { ...lambdaContext(), awsRequestId: 'request-1' } as never);
  });
  return text
    .split('\n')
    .filter((line) => line.startsWith('{') && !line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as Line)
    .filter((line) => line.message !== 'batch processed');
}

/** The keys an operator finds this job's lines by. */
const RUNTIME_KEYS = {
  messageId: 'm-1',
  jobType: 'billing.charge',
  jobId: 'job-1',
  attempt: 1,
  parentJobId: 'parent-1',
  rootJobId: 'root-1',
  correlationId: 'order-42',
  traceId: '0af7651916cd43dd8448eb211c80319c',
  function_request_id: 'request-1',
};

const warning = (key: string) => `The key "${key}" is a reserved key and will be dropped.`;

afterEach(() => {
  vi.unstubAllEnvs();
});

describe.each([
  ['the default logger', () => undefined],
  ['a given Powertools Logger', () => new Logger({ serviceName: 'billing' })],
])('ctx.logger through %s', (_name, makeLogger) => {
  it('logs an Error under `error` as Powertools formats it (name, location, message, stack, cause), with the job keys', async () => {
    const [line] = await linesOf('error', makeLogger());
    expect(line).toMatchObject({ level: 'ERROR', message: 'charge failed', ...RUNTIME_KEYS });
    const error = line?.error as Record<string, unknown>;
    expect(error).toMatchObject({ name: 'TypeError', message: 'card declined', code: 'E42' });
    expect(error.location).toMatch(/job-logger\.test\.ts:\d+$/);
    expect(error.stack).toMatch(/^TypeError: card declined\n/);
    expect(error.cause).toMatchObject({ name: 'Error', message: 'socket hang up' });
  });

  it('logs a string under `extra`', async () => {
    const [line] = await linesOf('string', makeLogger());
    expect(line).toMatchObject({
      level: 'WARN',
      message: 'charge retried',
      extra: 'card declined',
      ...RUNTIME_KEYS,
    });
  });

  it("keeps the runtime's keys over the job's, keeps the job's other keys, and warns once per key at each call", async () => {
    const lines = await linesOf('forged', makeLogger());
    expect(lines.map((line) => line.message)).toEqual([
      warning('jobId'),
      warning('messageId'),
      warning('correlationId'),
      warning('rootJobId'),
      warning('function_request_id'),
      'charged',
      warning('jobId'),
      'charged again',
    ]);
    // Every line, the warnings too, is found by the job's keys.
    for (const line of lines) expect(line).toMatchObject(RUNTIME_KEYS);
    expect(lines[5]).toMatchObject({ level: 'INFO', invoiceId: 'inv-7' });
    expect(lines[7]).toMatchObject({ level: 'INFO', amountCents: 1200 });
    expect(lines[0]).toMatchObject({ level: 'WARN' });
  });

  it('never throws into the job: keys it cannot read give `logFailed` on the line', async () => {
    const lines = await linesOf('throwing', makeLogger());
    expect(lines).toEqual([
      expect.objectContaining({
        message: 'odd keys',
        logFailed: 'RangeError: getter failed',
        ...RUNTIME_KEYS,
      }),
    ]);
  });

  it('writes no warning for a line below the log level (as Powertools)', async () => {
    expect(await linesOf('debugForged', makeLogger())).toEqual([]);
  });

  it('takes several objects and an Error from JavaScript, as Powertools does', async () => {
    const lines = await linesOf('javascript', makeLogger());
    expect(lines.map((line) => line.message)).toEqual([warning('jobType'), 'mixed']);
    expect(lines[1]).toMatchObject({ a: 1, b: 2, jobType: 'billing.charge', error: { message: 'late' } });
  });
});

describe('the rule it follows', () => {
  it('is how Powertools treats its own reserved keys: dropped, one warning per key at each call', () => {
    const logger = new Logger({ serviceName: 'billing' });
    const written: string[] = [];
    const collect = (chunk: string | Uint8Array): boolean => {
      written.push(String(chunk));
      return true;
    };
    const spies = [
      vi.spyOn(process.stdout, 'write').mockImplementation(collect),
      vi.spyOn(process.stderr, 'write').mockImplementation(collect),
    ];
    try {
      logger.info('one', { service: 'x', timestamp: 'y', kept: 1 });
      logger.info('two', { service: 'x' });
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    const messages = written.map((line) => (JSON.parse(line) as Line).message);
    expect(messages).toEqual([warning('service'), warning('timestamp'), 'one', warning('service'), 'two']);
  });
});

describe('runJob (the test kit)', () => {
  it("records ctx.logger's lines as the worker writes their keys", async () => {
    const errorRun = await runJob(job, { script: 'error' });
    expect(errorRun.logs[0]?.extra?.error).toBeInstanceOf(TypeError);
    const forged = await runJob(job, { script: 'forged' });
    expect(forged.logs.slice(0, 2)).toEqual([
      { level: 'warn', message: warning('jobId'), extra: undefined },
      { level: 'warn', message: warning('messageId'), extra: undefined },
    ]);
    expect(forged.logs[5]).toEqual({ level: 'info', message: 'charged', extra: { invoiceId: 'inv-7' } });
  });
});
