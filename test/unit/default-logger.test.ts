/**
 * The worker's default logger (lib/runtime/default-logger.ts) writes what a Powertools Logger
 * built as the worker built its default (`new Logger({ serviceName })` with
 * `injectLambdaContext(logger, { resetKeys: true })`) writes, byte for byte (issue 21). Each case
 * drives three loggers with the same environment, clock, random draws, Lambda contexts and calls:
 * ours; a Powertools Logger under Powertools' own middleware; and a Powertools Logger under
 * ours for a given Logger (logger-context.ts), and compares everything each wrote to stdout,
 * stderr and the global console, in order, and what each threw when built. A sibling property
 * does the same for a job's `ctx.logger` (lib/runtime/job-logger.ts) over ours and over a given
 * Powertools Logger, against a Powertools Logger called directly with the job's extra input (an
 * object, an Error, a string, any mix) and the record's keys around it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Context } from 'aws-lambda';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EnvelopeLineage } from '../../lib/core/envelope.ts';
import { DefaultLogger } from '../../lib/runtime/default-logger.ts';
import { jobLogger, OUTCOME_LOG_KEY, RUNTIME_LOG_KEYS } from '../../lib/runtime/job-logger.ts';
import { lineageLogKeys, withLineage } from '../../lib/runtime/lineage.ts';
import { powertoolsLoggerContext } from '../../lib/runtime/logger-context.ts';
import {
  describeLogFailure,
  fromPowertools,
  type WorkerLogger,
  withKeys,
} from '../../lib/runtime/telemetry.ts';
import { lambdaContext } from '../factories/sqs.ts';

type Level = 'debug' | 'info' | 'warn' | 'error';

/** One step of a scenario: an invocation starts, a line is logged, or the batch summary is. */
type Step =
  | {
      readonly kind: 'invoke';
      readonly event: unknown;
      readonly context: Partial<Context> & { tenantId?: string };
    }
  | {
      readonly kind: 'log';
      readonly level: Level;
      readonly message: string;
      readonly extra?: unknown;
      /** Given instead of `extra`: the arguments after the message, as a job passes them to ctx.logger. */
      readonly extras?: readonly unknown[];
    }
  | { readonly kind: 'summary'; readonly extra: Record<string, string | number | boolean> };

interface Scenario {
  readonly env: Record<string, string | undefined>;
  readonly now: number;
  /** What `crypto.randomInt(0, 100)` returns, in turn (then 0). */
  readonly draws: readonly number[];
  readonly steps: readonly Step[];
}

/** The loggers compared, each as the worker drives it. */
interface Driven {
  readonly logger: WorkerLogger;
  begin(event: unknown, context: Context): Promise<void>;
  summary(extra: Record<string, string | number | boolean>): void;
}

function serviceName(): string {
  return process.env.POWERTOOLS_SERVICE_NAME ?? 'sqs-jobs-orders';
}

const drivers: Record<string, () => Driven> = {
  ours: () => {
    const logger = new DefaultLogger(serviceName());
    return {
      logger: fromPowertools(logger),
      begin: async (event, context) => logger.begin(event, context),
      summary: (extra) => logger.summary('batch processed', extra),
    };
  },
  powertools: () => {
    const logger = new Logger({ serviceName: serviceName() });
    const middleware = injectLambdaContext(logger, { resetKeys: true });
    return {
      logger: fromPowertools(logger),
      begin: async (event, context) => {
        await middleware.before?.({ event, context, internal: {} } as never);
      },
      summary: (extra) => logger.info('batch processed', extra),
    };
  },
  'powertools through logger-context.ts': () => {
    const logger = new Logger({ serviceName: serviceName() });
    const middleware = powertoolsLoggerContext(logger);
    return {
      logger: fromPowertools(logger),
      begin: async (event, context) => {
        await middleware.before?.({ event, context, internal: {} } as never);
      },
      summary: (extra) => logger.info('batch processed', extra),
    };
  },
};

const nodeCrypto = createRequire(import.meta.url)('node:crypto') as {
  randomInt: (min: number, max: number) => number;
};
const realRandomInt = nodeCrypto.randomInt;

/** Runs `scenario` through one logger: everything written, in order, each chunk tagged with where it went. */
async function run(driver: () => Driven | Promise<Driven>, scenario: Scenario): Promise<string[]> {
  const written: string[] = [];
  const spies = [
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(`stdout ${String(chunk)}`);
      return true;
    }),
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(`stderr ${String(chunk)}`);
      return true;
    }),
    ...(['debug', 'info', 'warn', 'error', 'log'] as const).map((method) =>
      vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
        written.push(`console.${method} ${args.map(String).join(' ')}`);
      }),
    ),
  ];
  for (const [key, value] of Object.entries(scenario.env)) vi.stubEnv(key, value);
  vi.useFakeTimers({ toFake: ['Date'], now: scenario.now });
  let draw = 0;
  nodeCrypto.randomInt = () => scenario.draws[draw++] ?? 0;
  syncBuiltinESMExports();
  try {
    let driven: Driven;
    try {
      driven = await driver();
    } catch (error) {
      written.push(`thrown when built: ${String(error)}`);
      return written;
    }
    for (const step of scenario.steps) {
      try {
        if (step.kind === 'invoke') {
          await driven.begin(step.event, { ...lambdaContext(), ...step.context } as Context);
        } else if (step.kind === 'summary') {
          driven.summary(step.extra);
        } else if (step.extras !== undefined) {
          const method = driven.logger[step.level] as (this: unknown, ...args: unknown[]) => void;
          method.call(driven.logger, step.message, ...step.extras);
        } else if (step.extra === undefined) {
          driven.logger[step.level](step.message);
        } else {
          driven.logger[step.level](step.message, step.extra as Record<string, unknown>);
        }
      } catch (error) {
        written.push(`thrown by ${step.kind}: ${String(error)}`);
      }
    }
    written.push(`random draws: ${draw}`);
    return written;
  } finally {
    nodeCrypto.randomInt = realRandomInt;
    syncBuiltinESMExports();
    vi.useRealTimers();
    vi.unstubAllEnvs();
    for (const spy of spies) spy.mockRestore();
  }
}

async function expectSameOutput(scenario: Scenario): Promise<string[]> {
  const outputs: Record<string, string[]> = {};
  for (const [name, driver] of Object.entries(drivers)) outputs[name] = await run(driver, scenario);
  expect(outputs.ours).toEqual(outputs.powertools);
  expect(outputs['powertools through logger-context.ts']).toEqual(outputs.powertools);
  return outputs.ours as string[];
}

// ---- ctx.logger: the same bytes as Powertools given the same call, with the record's keys ----

/** The record's identity as the worker gives it to ctx.logger (lib/runtime/record/record-run.ts). */
const IDENTITY = { messageId: 'm-1', jobType: 'billing.charge', jobId: 'job-1', attempt: 2 };

/** Keys Powertools reserves (logger lib/esm/constants.js `ReservedKeys`). */
const POWERTOOLS_RESERVED = ['level', 'message', 'sampling_rate', 'service', 'timestamp'];

const LEVEL_NUMBER: Record<Level, number> = { debug: 8, info: 12, warn: 16, error: 20 };

/**
 * ctx.logger as the worker builds it (run-context.ts over record-run.ts) over a driven logger:
 * the job-facing logger over the identity keys over the lineage keys over the worker's logger.
 */
function asJobLogger(driven: Driven, lineage: EnvelopeLineage): Driven {
  return { ...driven, logger: jobLogger(withKeys(withLineage(driven.logger, lineage), IDENTITY)) };
}

/**
 * The reference: a Powertools Logger under its own middleware, called as Powertools is called
 * (`logger.error(message, ...extraInput)`) with the record's keys given around the job's input
 * (identity first, lineage last, as the worker places them) and the runtime's keys treated as
 * Powertools treats its reserved keys (dropped, one warning per key given, for a line written),
 * the warnings carrying the record's keys. A line whose keys cannot be read is written with
 * `logFailed`, as the worker's logger writes it.
 */
function powertoolsReference(lineage: EnvelopeLineage): Driven {
  const logger = new Logger({ serviceName: serviceName() });
  const middleware = injectLambdaContext(logger, { resetKeys: true });
  const lineageKeys: Record<string, unknown> = { ...lineageLogKeys(lineage) };
  const reserved = new Set<string>([...POWERTOOLS_RESERVED, ...RUNTIME_LOG_KEYS, OUTCOME_LOG_KEY]);
  const write =
    (level: Level) =>
    (message: string, ...extras: unknown[]): void => {
      const call = logger[level] as (message: string, ...extra: unknown[]) => void;
      const written = logger.level <= LEVEL_NUMBER[level];
      let items: unknown[] = [];
      try {
        for (const item of extras) {
          if (typeof item !== 'object' || item === null || item instanceof Error) {
            items.push(item);
            continue;
          }
          // The same object without the reserved keys (own keys as own keys, `__proto__` too).
          const entries = Object.entries(item);
          for (const [key] of entries) {
            if (reserved.has(key) && written) {
              logger.warn(`The key "${key}" is a reserved key and will be dropped.`, IDENTITY, lineageKeys);
            }
          }
          items.push(Object.fromEntries(entries.filter(([key]) => !reserved.has(key))));
        }
      } catch (error) {
        items = [{ logFailed: describeLogFailure(error) }];
      }
      try {
        call.call(logger, message, IDENTITY, ...items, lineageKeys);
      } catch (error) {
        call.call(logger, message, { logFailed: describeLogFailure(error) });
      }
    };
  return {
    logger: { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') },
    summary: (extra) => logger.info('batch processed', extra),
    begin: async (event, context) => {
      await middleware.before?.({ event, context, internal: {} } as never);
    },
  };
}

afterEach(() => {
  nodeCrypto.randomInt = realRandomInt;
  syncBuiltinESMExports();
  vi.unstubAllEnvs();
  vi.useRealTimers();
  vi.restoreAllMocks();
});

// ---- generators ----

/** Unset, or one of a few values including Powertools' odd cases (lower case, unknown names). */
const maybe = (...values: string[]) => fc.option(fc.constantFrom(...values), { nil: undefined });

const envArb = fc.record({
  POWERTOOLS_LOG_LEVEL: maybe(
    'TRACE',
    'DEBUG',
    'INFO',
    'WARN',
    'ERROR',
    'CRITICAL',
    'SILENT',
    'debug',
    'bogus',
    '',
    ' WARN ',
  ),
  LOG_LEVEL: maybe('DEBUG', 'WARN', 'error', ''),
  AWS_LAMBDA_LOG_LEVEL: maybe('DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL', 'TRACE', 'nonsense'),
  POWERTOOLS_LOGGER_SAMPLE_RATE: maybe('0', '0.5', '1', '0.13', '2', '-1', '', ' 0.5 '),
  POWERTOOLS_DEV: maybe('true', 'false', '1', 'yes', 'no', 'TRUE', ''),
  TZ: maybe(
    'UTC',
    ':UTC',
    'Etc/UTC',
    'Europe/Paris',
    'America/St_Johns',
    'Asia/Kolkata',
    'Pacific/Chatham',
    'Not/AZone',
  ),
  POWERTOOLS_SERVICE_NAME: maybe('billing', '', ' spaced ', 'ünïcødé ✓'),
  AWS_LAMBDA_INITIALIZATION_TYPE: maybe('on-demand', 'provisioned-concurrency', ' on-demand '),
  _X_AMZN_TRACE_ID: maybe(
    'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
    '1-5759e988-bd862e3fe1be46a994272793',
    'Parent=53995c3f42cd8ad8;Sampled=0',
    '',
  ),
  POWERTOOLS_LOGGER_LOG_EVENT: maybe('true', 'false', 'TRUE'),
  // Never set here: one invocation at a time (the invoke-store case has its own test below).
  AWS_LAMBDA_MAX_CONCURRENCY: fc.constant(undefined),
});

/** An Error with a message, maybe a cause (an Error or not), maybe keys of its own. */
const errorArb: fc.Arbitrary<Error> = fc.letrec<{ error: Error }>((tie) => ({
  error: fc
    .record({
      kind: fc.constantFrom('Error', 'TypeError', 'RangeError', 'custom'),
      message: fc.string({ unit: 'binary', maxLength: 20 }),
      cause: fc.option(fc.oneof({ depthSize: 'small' }, tie('error'), fc.string(), fc.integer()), {
        nil: undefined,
      }),
      own: fc.option(
        fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
        {
          nil: undefined,
        },
      ),
      stackless: fc.boolean(),
    })
    .map(({ kind, message, cause, own, stackless }) => {
      const error =
        kind === 'custom'
          ? Object.assign(new Error(message), { name: 'GatewayError' })
          : new (globalThis as unknown as Record<string, ErrorConstructor>)[kind]!(
              message,
              ...(cause === undefined ? [] : [{ cause }]),
            );
      if (own !== undefined) Object.assign(error, own);
      if (stackless) error.stack = `${error.name}: ${error.message}`;
      return error;
    }),
})).error;

/** A value met again inside itself, and one whose getter throws. */
function oddValues(): unknown[] {
  const circular: Record<string, unknown> = { name: 'loop' };
  circular.self = circular;
  const list: unknown[] = [1];
  list.push(list, { inner: list });
  class Account {
    id = 'acc-1';
    owner: unknown = undefined;
    constructor() {
      this.owner = { account: this };
    }
  }
  const throwing = {
    get boom(): string {
      throw new RangeError('getter failed');
    },
  };
  // A hole at index 1: JSON writes null there.
  const sparse: unknown[] = [undefined];
  sparse[2] = 3;
  return [
    circular,
    list,
    new Account(),
    new Map([['a', 1]]),
    throwing,
    Object.create(null),
    sparse,
    inheritingError(),
  ];
}

/** An error with an enumerable key it inherits (Powertools writes such a key as undefined: left out). */
function inheritingError(): Error {
  const proto = Object.create(Error.prototype, { code: { value: 'E_PROTO', enumerable: true } });
  const error = Object.setPrototypeOf(new Error('inherited'), proto) as Error;
  return Object.assign(error, { retryable: true });
}

const valueArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({
    maxDepth: 3,
    withBigInt: true,
    withDate: true,
    withMap: true,
    withNullPrototype: true,
    withSparseArray: true,
    withBoxedValues: true,
    withObjectString: true,
    withUnicodeString: true,
  }),
  errorArb,
  fc.record({ error: errorArb, nested: fc.array(fc.oneof(errorArb, fc.constant(null), fc.constant(''))) }),
  fc.constantFrom(...oddValues()),
  fc.constantFrom(undefined, null, '', 0, -0, Number.NaN, Number.POSITIVE_INFINITY, false, true),
);

/** Keys users write, keys Powertools reserves or places, integer keys JSON puts first, and any string. */
const keyArb = fc.oneof(
  fc.constantFrom(
    'jobId',
    'error',
    'level',
    'message',
    'service',
    'timestamp',
    'sampling_rate',
    'cold_start',
    'function_name',
    'xray_trace_id',
    'tenant_id',
    '1',
    '42',
    '__proto__',
    'constructor',
    'toString',
    'extra',
  ),
  fc.string({ unit: 'binary', maxLength: 8 }),
);

const extraArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: fc.dictionary(keyArb, valueArb, { maxKeys: 5 }) },
  { weight: 1, arbitrary: errorArb },
  { weight: 1, arbitrary: fc.string({ maxLength: 5 }) },
  { weight: 1, arbitrary: fc.constantFrom(null, undefined, [1, 'two']) },
);

const messageArb = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom('', 'batch processed'),
);

const contextArb = fc.record(
  {
    awsRequestId: fc.oneof(fc.uuid(), fc.constant('')),
    functionName: fc.oneof(
      fc.constantFrom('orders-worker', ''),
      fc.string({ unit: 'grapheme', maxLength: 10 }),
    ),
    memoryLimitInMB: fc.constantFrom('128', '1024', ''),
    invokedFunctionArn: fc.constantFrom('arn:aws:lambda:eu-west-1:123456789012:function:orders-worker', ''),
    tenantId: fc.constantFrom('tenant-7', ''),
  },
  { requiredKeys: ['awsRequestId'] },
);

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('invoke' as const),
      event: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant({ Records: [{ messageId: 'm-1' }] })),
      context: contextArb,
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record(
      {
        kind: fc.constant('log' as const),
        level: fc.constantFrom<Level>('debug', 'info', 'warn', 'error'),
        message: messageArb,
        extra: extraArb,
      },
      { requiredKeys: ['kind', 'level', 'message'] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('summary' as const),
      extra: fc.dictionary(
        fc.constantFrom('outcome', 'records', 'completed', 'durationMs', 'note', 'ünï'),
        fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), fc.integer(), fc.double(), fc.boolean()),
        { maxKeys: 4 },
      ),
    }),
  },
);

/** A job's keys: any key above, and the runtime's own. */
const jobObjectArb = fc.dictionary(
  fc.oneof(keyArb, fc.constantFrom(...RUNTIME_LOG_KEYS, OUTCOME_LOG_KEY)),
  valueArb,
  {
    maxKeys: 5,
  },
);

/** What a job passes after the message: one object, one Error, one string, or (JavaScript) any mix. */
const jobExtrasArb: fc.Arbitrary<readonly unknown[]> = fc.oneof(
  { weight: 3, arbitrary: fc.tuple(jobObjectArb) },
  { weight: 2, arbitrary: fc.tuple(errorArb) },
  { weight: 2, arbitrary: fc.tuple(fc.string({ maxLength: 5 })) },
  { weight: 1, arbitrary: fc.constant([]) },
  {
    weight: 2,
    arbitrary: fc.array(
      fc.oneof(
        jobObjectArb,
        errorArb,
        fc.string({ maxLength: 5 }),
        fc.constantFrom(null, undefined, [1, 'two']),
      ),
      { maxLength: 4 },
    ),
  },
);

const jobStepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 1, arbitrary: stepArb.filter((step) => step.kind === 'invoke') },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('log' as const),
      level: fc.constantFrom<Level>('debug', 'info', 'warn', 'error'),
      message: messageArb,
      extras: jobExtrasArb,
    }),
  },
);

/** A job's lineage: any of its attributes set (none: a root job without correlation id or trace). */
const lineageArb: fc.Arbitrary<EnvelopeLineage> = fc.record(
  {
    correlationid: fc.constant('order-42'),
    causationid: fc.constant('parent-1'),
    rootid: fc.constant('root-1'),
    traceparent: fc.constant('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'),
  },
  { requiredKeys: [] },
);

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  env: envArb,
  now: fc.integer({ min: Date.parse('2000-01-01T00:00:00Z'), max: Date.parse('2090-12-31T23:59:59Z') }),
  draws: fc.array(fc.integer({ min: 0, max: 99 }), { maxLength: 6 }),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 8 }),
});

describe('the default logger', () => {
  it('writes what the Powertools Logger writes, byte for byte, for any environment, context and call', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (scenario) => {
        await expectSameOutput(scenario);
      }),
      { numRuns: 250 },
    );
  });

  it("ctx.logger writes what Powertools writes for the same call (an object, an Error, a string, any mix), the record's keys added and kept", async () => {
    await fc.assert(
      fc.asyncProperty(
        scenarioArb.chain((scenario) =>
          fc.record({
            scenario: fc.constant(scenario),
            steps: fc.array(jobStepArb, { minLength: 1, maxLength: 8 }),
            lineage: lineageArb,
          }),
        ),
        async ({ scenario, steps, lineage }) => {
          const jobScenario = { ...scenario, steps };
          const reference = await run(() => powertoolsReference(lineage), jobScenario);
          for (const name of ['ours', 'powertools'] as const) {
            const driver = drivers[name] as () => Driven;
            expect(await run(() => asJobLogger(driver(), lineage), jobScenario)).toEqual(reference);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it.each([
    [
      'a sampled invocation (rate 0.5, draw 10): DEBUG lines in that invocation only',
      { POWERTOOLS_LOGGER_SAMPLE_RATE: '0.5' },
      [99, 10, 90],
    ],
    [
      'sampling under Advanced Logging Controls at WARN: the warning once',
      { POWERTOOLS_LOGGER_SAMPLE_RATE: '1', AWS_LAMBDA_LOG_LEVEL: 'WARN' },
      [],
    ],
    ['events logged (POWERTOOLS_LOGGER_LOG_EVENT)', { POWERTOOLS_LOGGER_LOG_EVENT: 'true' }, []],
    ['pretty printed (POWERTOOLS_DEV), stacks as lines', { POWERTOOLS_DEV: 'true' }, []],
    ['a zone with a negative offset in minutes', { TZ: 'America/St_Johns' }, []],
    ['an unknown zone: one warning', { TZ: 'Not/AZone' }, []],
  ])('writes the Powertools bytes: %s', async (_name, env, draws) => {
    const invoke = (i: number): Step => ({
      kind: 'invoke',
      event: { Records: [{ messageId: `m-${i}` }] },
      context: { awsRequestId: `request-${i}` },
    });
    const cause = new Error('socket hang up');
    const steps: Step[] = [
      invoke(1),
      { kind: 'log', level: 'debug', message: 'job completed', extra: { jobId: 'j-1' } },
      {
        kind: 'log',
        level: 'error',
        message: 'job failed',
        extra: { error: new TypeError('gateway', { cause }), also: inheritingError() },
      },
      { kind: 'summary', extra: { outcome: 'batch', records: 2, durationMs: 12 } },
      // Keys over the base keys: undefined keeps the base value, null and '' drop it; integers first.
      {
        kind: 'log',
        level: 'error',
        message: 'override',
        extra: {
          function_name: undefined,
          cold_start: null,
          function_arn: '',
          function_request_id: 'mine',
          '7': 'first',
        },
      },
      invoke(2),
      { kind: 'log', level: 'debug', message: 'job completed', extra: { jobId: 'j-2' } },
      { kind: 'log', level: 'warn', message: 'retrying', extra: { service: 'reserved', attempt: 2 } },
      invoke(3),
      { kind: 'log', level: 'debug', message: 'job completed', extra: { jobId: 'j-3' } },
    ];
    const written = await expectSameOutput({
      env: { AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand', ...env },
      now: Date.parse('2026-12-01T10:20:30.456Z'),
      draws,
      steps,
    });
    // Something was written in each case: the comparison is not of two empty outputs.
    expect(written.length).toBeGreaterThan(3);
  });

  it('keeps invocations apart as Powertools does when they share the process (AWS_LAMBDA_MAX_CONCURRENCY)', async () => {
    // Lambda's invoke store as the runtime installs it for Managed Instances: one context per invocation.
    const xray = Symbol.for('_AWS_LAMBDA_X_RAY_TRACE_ID');
    const als = new AsyncLocalStorage<Record<symbol, unknown>>();
    const store = {
      hasContext: () => als.getStore() !== undefined,
      get: (key: symbol) => als.getStore()?.[key],
      set: (key: symbol, value: unknown) => {
        const context = als.getStore();
        if (context === undefined) throw new Error('No context available');
        context[key] = value;
      },
      getXRayTraceId: () => als.getStore()?.[xray] as string | undefined,
    };
    const holder = globalThis as { awslambda?: Record<string, unknown> };
    holder.awslambda ??= {};
    const lambda = holder.awslambda;
    const before = lambda.InvokeStore;
    lambda.InvokeStore = store;
    const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
    const concurrently = async (driven: Driven, round: number) => {
      await Promise.all(
        [1, 2].map((i) =>
          als.run({ [xray]: `Root=1-5759e988-bd862e3fe1be46a99427279${round}${i}` }, async () => {
            await driven.begin({ i }, {
              ...lambdaContext(),
              awsRequestId: `request-${round}-${i}`,
            } as Context);
            await nextTurn();
            driven.logger.debug('job completed', { i });
            await nextTurn();
            driven.summary({ outcome: 'batch', records: i });
          }),
        ),
      );
    };
    try {
      const outputs: string[][] = [];
      for (const driver of Object.values(drivers)) {
        let driven: Driven | undefined;
        const rounds = async () => {
          driven = driver();
          for (const round of [1, 2, 3]) await concurrently(driven, round);
          driven.logger.info('between invocations');
          return [] as Step[];
        };
        outputs.push(
          await run(
            async () => {
              await rounds();
              return driven as Driven;
            },
            {
              env: {
                AWS_LAMBDA_MAX_CONCURRENCY: '4',
                POWERTOOLS_LOGGER_SAMPLE_RATE: '0.5',
                AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
              },
              now: Date.parse('2026-12-01T10:20:30.456Z'),
              draws: [99, 10, 99, 99, 10],
              steps: [],
            },
          ),
        );
      }
      expect(outputs[0]).toEqual(outputs[1]);
      expect(outputs[2]).toEqual(outputs[1]);
      // Sampled in one invocation of a round: its DEBUG line is there, its neighbour's is not.
      expect(outputs[0]?.filter((line) => line.includes('"message":"job completed"')).length).toBeGreaterThan(
        0,
      );
      expect(outputs[0]?.filter((line) => line.includes('"message":"job completed"')).length).toBeLessThan(6);
    } finally {
      lambda.InvokeStore = before;
    }
  });

  it('throws as Powertools throws with AWS_LAMBDA_MAX_CONCURRENCY but no invoke store (outside Lambda)', async () => {
    const holder = globalThis as { awslambda?: Record<string, unknown> };
    expect(holder.awslambda?.InvokeStore).toBeUndefined();
    const written = await expectSameOutput({
      env: { AWS_LAMBDA_MAX_CONCURRENCY: '4' },
      now: 0,
      draws: [],
      steps: [
        { kind: 'invoke', event: {}, context: {} },
        { kind: 'log', level: 'info', message: 'lost' },
        { kind: 'summary', extra: { records: 1 } },
      ],
    });
    expect(written).toEqual([
      'thrown by invoke: Error: InvokeStore is not available',
      'thrown by summary: Error: InvokeStore is not available',
      'random draws: 0',
    ]);
  });

  it('throws as Powertools throws when built with a sample rate or log-event setting it refuses', async () => {
    for (const env of [{ POWERTOOLS_LOGGER_SAMPLE_RATE: 'half' }, { POWERTOOLS_LOGGER_LOG_EVENT: 'yes' }]) {
      const written = await expectSameOutput({ env, now: 0, draws: [], steps: [] });
      expect(written[0]).toMatch(/^thrown when built: .*Environment variable POWERTOOLS_LOGGER_/);
    }
  });
});
