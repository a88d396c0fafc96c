/**
 * `ctx.logger` (lib/runtime/job-logger.ts) as a job's author and an operator see it, through a
 * worker on its default logger and through one given a Powertools Logger: an Error logged as
 * Powertools logs it (under `error`: name, location, message, stack, cause), a string under
 * `extra`, and the runtime's keys (identity, lineage, Lambda context) kept on every line, a job's
 * key of one of those names dropped with Powertools' reserved-key warning at each call, as
 * Powertools warns for its own reserved keys.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { z } from 'zod';
import type { JobLogExtra, JobLogger, LogWriter } from '../../lib/core/logger.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { OUTCOME_LOG_KEY, RUNTIME_LOG_KEYS } from '../../lib/runtime/job-logger.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { type LoggedLine, runJob } from '../../lib/testing/run-job.ts';
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
  proxy: (logger) => {
    const keys = new Proxy(
      {},
      {
        ownKeys() {
          throw new TypeError('no keys');
        },
      },
    );
    logger.info('proxy keys', keys);
  },
  circular: (logger) => {
    const order: Record<string, unknown> = { orderId: 'o-1', lines: [1, 2], placedAt: new Date(0) };
    order.self = order;
    logger.info('circular', order);
  },
  toJSON: (logger) => {
    logger.info('bad json', {
      when: {
        toJSON: (): never => {
          throw new RangeError('no json');
        },
      },
    });
  },
  plain: (logger) => logger.info('plain'),
  nothing: (logger) => {
    logger.info('nothing', null as never);
    logger.warn('empty', {});
    logger.warn('undefined keys', { gone: undefined, empty: '', kept: 0 });
  },
  detached: (logger) => {
    const { info, warn } = logger;
    info('detached', { a: 1 });
    // From JavaScript: forEach passes (item, index, array), taken as extra input as Powertools takes it.
    ['each'].forEach(warn as (message: string) => void);
    const later = logger.error;
    later('bare');
  },
  thrownObject: (logger) => {
    try {
      throw { message: 'declined', code: 51 };
    } catch (error) {
      // The form JobLogger's docs give for what a catch gets.
      logger.error('charge failed', error instanceof Error ? error : { thrown: error });
    }
  },
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

  it("reserves every key the runtime puts on a job line (a key added to the record's logger must be added to RUNTIME_LOG_KEYS)", async () => {
    // The line a job writes with no keys of its own: everything on it beside Powertools' own keys
    // is the runtime's, and a job must not be able to set any of it.
    const reserved = new Set<string>([...RUNTIME_LOG_KEYS, OUTCOME_LOG_KEY]);
    const base = new Set(['level', 'message', 'timestamp', 'service', 'sampling_rate']);
    for (const logger of [undefined, makeLogger()]) {
      const [line] = await linesOf('plain', logger);
      expect(line).toMatchObject({ message: 'plain', ...RUNTIME_KEYS });
      const runtimeKeys = Object.keys(line as Line).filter((key) => !base.has(key));
      expect(runtimeKeys.filter((key) => !reserved.has(key))).toEqual([]);
    }
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

  it('keeps a thrown non-Error whole under `thrown`, logged as the docs say (no warning, the message kept)', async () => {
    const lines = await linesOf('thrownObject', makeLogger());
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'ERROR',
        message: 'charge failed',
        thrown: { message: 'declined', code: 51 },
        ...RUNTIME_KEYS,
      }),
    ]);
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

/** What runJob records of a worker's line: its own keys, without the base and the record's keys. */
function recorded(line: Line): LoggedLine {
  const { level, message, timestamp, service, sampling_rate, ...rest } = line;
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) {
    if (!(key in RUNTIME_KEYS) && !key.startsWith('function_') && key !== 'cold_start') extra[key] = value;
  }
  return {
    level: String(level).toLowerCase() as LoggedLine['level'],
    message: String(message),
    extra: Object.keys(extra).length === 0 ? undefined : withoutStack(extra),
  };
}

/** The error's stack differs between two runs below the job's frame: compared without it. */
function withoutStack(extra: Record<string, unknown>): Record<string, unknown> {
  const error = extra.error as Record<string, unknown> | undefined;
  if (typeof error !== 'object' || error === null) return extra;
  return {
    ...extra,
    error: { ...error, stack: 'stack', cause: { ...(error.cause as object), stack: 'stack' } },
  };
}

describe('runJob (the test kit) records what the worker writes', () => {
  it.each(Object.keys(SCRIPTS))(
    'script %s: the same lines as the worker at INFO, and the run completes',
    async (script) => {
      const written = (await linesOf(script)).map(recorded);
      const run = await runJob(job, { script }, { logLevel: 'INFO' });
      expect(run.status).toBe('completed');
      expect(
        run.logs.map((line) =>
          line.extra === undefined ? line : { ...line, extra: withoutStack(line.extra) },
        ),
      ).toEqual(written);
    },
  );

  it('a getter or a Proxy whose keys throw: the job completes, the line has `logFailed`', async () => {
    const throwing = await runJob(job, { script: 'throwing' });
    expect(throwing.status).toBe('completed');
    expect(throwing.logs).toEqual([
      { level: 'info', message: 'odd keys', extra: { logFailed: 'RangeError: getter failed' } },
    ]);
    const proxy = await runJob(job, { script: 'proxy' });
    expect(proxy.status).toBe('completed');
    expect(proxy.logs).toEqual([
      { level: 'info', message: 'proxy keys', extra: { logFailed: 'TypeError: no keys' } },
    ]);
  });

  it('records an Error as the worker writes it, circular keys and a failing toJSON as written, null as no keys', async () => {
    const errorRun = await runJob(job, { script: 'error' });
    expect(errorRun.logs[0]?.extra?.error).toEqual({
      name: 'TypeError',
      location: expect.stringMatching(/job-logger\.test\.ts:\d+$/),
      message: 'card declined',
      stack: expect.stringMatching(/^TypeError: card declined\n/),
      cause: expect.objectContaining({ name: 'Error', message: 'socket hang up' }),
      code: 'E42',
    });
    const circular = await runJob(job, { script: 'circular' });
    expect(circular.logs[0]?.extra).toEqual({
      orderId: 'o-1',
      lines: [1, 2],
      placedAt: '1970-01-01T00:00:00.000Z',
      // As the worker writes it: the object once more under `self`, met again inside it there.
      self: { orderId: 'o-1', lines: [1, 2], placedAt: '1970-01-01T00:00:00.000Z' },
    });
    const toJSON = await runJob(job, { script: 'toJSON' });
    expect(toJSON.logs[0]?.extra).toEqual({ logFailed: 'RangeError: no json' });
    const nothing = await runJob(job, { script: 'nothing' });
    expect(nothing.logs).toEqual([
      { level: 'info', message: 'nothing', extra: undefined },
      { level: 'warn', message: 'empty', extra: undefined },
      { level: 'warn', message: 'undefined keys', extra: { kept: 0 } },
    ]);
  });

  it('records a DEBUG line and its warnings only at DEBUG (the default), as a worker at that level writes them', async () => {
    expect((await runJob(job, { script: 'debugForged' }, { logLevel: 'INFO' })).logs).toEqual([]);
    expect((await runJob(job, { script: 'debugForged' })).logs).toEqual([
      { level: 'warn', message: warning('jobId'), extra: undefined },
      { level: 'debug', message: 'detail', extra: undefined },
    ]);
    const refused = runJob(job, { script: 'debugForged' }, { logLevel: 'debug' as never });
    await expect(refused).rejects.toThrow(
      /options\.logLevel must be one of DEBUG, INFO, WARN, ERROR .*got a string \("debug"\)/,
    );
  });

  it('keeps the warnings before their line and drops the forged keys', async () => {
    const forged = await runJob(job, { script: 'forged' });
    expect(forged.logs.slice(0, 2)).toEqual([
      { level: 'warn', message: warning('jobId'), extra: undefined },
      { level: 'warn', message: warning('messageId'), extra: undefined },
    ]);
    expect(forged.logs[5]).toEqual({ level: 'info', message: 'charged', extra: { invoiceId: 'inv-7' } });
  });
});

describe('ctx.logger methods taken off the logger', () => {
  it.each([
    ['the default logger', () => undefined],
    ['a given Powertools Logger', () => new Logger({ serviceName: 'billing' })],
  ])('work detached through %s: the job completes and the lines are written', async (_name, makeLogger) => {
    const lines = await linesOf('detached', makeLogger());
    expect(lines.map((line) => [line.level, line.message])).toEqual([
      ['INFO', 'detached'],
      ['WARN', 'each'],
      ['ERROR', 'bare'],
    ]);
    expect(lines[0]).toMatchObject({ a: 1, ...RUNTIME_KEYS });
  });
});

describe('JobLogger types', () => {
  it('take several extra inputs, as Powertools types them; loggers written for one still fit, and console', async () => {
    const calls: unknown[][] = [];
    // A JobLogger written before the methods took several: still one.
    const older: JobLogger = {
      debug: (message: string, extra?: JobLogExtra) => calls.push([message, extra]),
      info: (message: string, extra?: JobLogExtra) => calls.push([message, extra]),
      warn: (message: string, extra?: JobLogExtra) => calls.push([message, extra]),
      error: (message: string, extra?: JobLogExtra) => calls.push([message, extra]),
    };
    expectTypeOf(console).toExtend<JobLogger>();
    expectTypeOf(new Logger()).toExtend<JobLogger>();
    // What JobClient takes (keys as one object): a JobLogger is one.
    expectTypeOf<JobLogger>().toExtend<LogWriter>();
    older.info('one', { a: 1 }, { b: 2 }, new Error('x'), 'text', undefined);
    // @ts-expect-error a number is no extra input (an object, an Error or a string)
    older.info('two', 42);
    const several = defineJob({
      type: 'billing.several',
      queue: 'billing',
      schema: z.object({}),
      run: async (_data, ctx) => {
        ctx.logger.info('merged', { a: 1 }, { b: 2 });
      },
    });
    const run = await runJob(several, {});
    expect(run.logs).toEqual([{ level: 'info', message: 'merged', extra: { a: 1, b: 2 } }]);
  });
});
