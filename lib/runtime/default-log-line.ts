/**
 * The worker's batch summary line (`batch processed`, one per invocation), written exactly as the
 * worker's default Powertools Logger writes it, byte for byte, without going through it.
 *
 * Why: through the Logger one INFO line costs about 20 µs of CPU (level names looked up, the
 * environment read three times, the Lambda context copied, attributes deep-merged, a second
 * object built to drop empty keys, `JSON.stringify` with a replacer, then `Console`), which was
 * a third of the worker's CPU at a batch of 10 and most of it at a batch of 1 (issue 21). Here it
 * is one string: what stays the same for the invocation is serialized once, at its start.
 *
 * What it reproduces is Powertools' `PowertoolsLogFormatter` as the worker's default Logger uses
 * it (lib/runtime/telemetry.ts `createDefaultLogger`): keys `level`, `message`, `timestamp`,
 * `service`, `cold_start`, `function_arn`, `function_memory_size`, `function_name`,
 * `function_request_id`, `sampling_rate`, `xray_trace_id`, `tenant_id`, then the line's own keys,
 * empty values (`undefined`, `''`, `null`) left out, one line on stdout; the level gate is the
 * Logger's own (its current level, debug sampling and `setLogLevel` included). It is used only
 * where that is all the Logger would do: the default Logger (nobody else can append keys to it),
 * no `POWERTOOLS_DEV` (pretty-printed through the global console), `TZ` unset or UTC (other zones
 * are formatted with an offset), no persistent keys, one invocation at a time (no
 * `AWS_LAMBDA_MAX_CONCURRENCY`). Anywhere else the line goes through the
 * Logger. test/unit/default-log-line.test.ts compares both for the same batches.
 */
import { type Logger, LogLevelThreshold } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';

/** The values a summary line carries: written by `JSON.stringify` as Powertools' replacer would. */
export type LineValue = string | number | boolean;

/** The parts of the Logger read here; `powertoolsLogData` is TypeScript-private, read once. */
interface LoggerData {
  readonly powertoolsLogData?: { readonly serviceName?: unknown; readonly sampleRateValue?: unknown };
}

export class DefaultLogLine {
  readonly #logger: Logger;
  readonly #service: string;
  readonly #samplingRate: number;
  /** As Powertools' `Utility`: only an on-demand environment has a cold start. */
  readonly #onDemand: boolean;
  readonly #write: (line: string) => void;
  #invocations = 0;
  /** The members after the timestamp for this invocation, each with its leading comma (see {@link begin}). */
  #invocationMembers = '';
  #head: FunctionMembers | undefined;

  private constructor(logger: Logger, service: string, samplingRate: number, write: (line: string) => void) {
    this.#logger = logger;
    this.#service = service;
    this.#samplingRate = samplingRate;
    this.#onDemand = process.env.AWS_LAMBDA_INITIALIZATION_TYPE?.trim() === 'on-demand';
    this.#write = write;
  }

  /**
   * The writer for `logger`, a Logger built by `createDefaultLogger` and handed to nobody else, or
   * undefined where the Logger would write something else (then log through it). Reads
   * `process.env` as the Logger does; call it when the Logger is built.
   * @param write where a line goes. @default stdout, as the Logger's own `Console` writes it
   */
  static forDefaultLogger(
    logger: Logger,
    write: (line: string) => void = (line) => {
      process.stdout.write(line);
    },
  ): DefaultLogLine | undefined {
    const env = process.env;
    if (env.POWERTOOLS_DEV !== undefined && env.POWERTOOLS_DEV.trim() !== '') return undefined;
    // Invocations at once in one process (Lambda Managed Instances): the Logger keeps each one's
    // context apart (Lambda's invoke store); this writer keeps one invocation's, so it stands aside.
    if (env.AWS_LAMBDA_MAX_CONCURRENCY !== undefined && env.AWS_LAMBDA_MAX_CONCURRENCY.trim() !== '') {
      return undefined;
    }
    const tz = env.TZ?.trim();
    if (tz !== undefined && tz !== '' && !tz.includes('UTC')) return undefined;
    if (Object.keys(logger.getPersistentLogAttributes()).length > 0) return undefined;
    const data = (logger as unknown as LoggerData).powertoolsLogData;
    const service = data?.serviceName;
    const samplingRate = data?.sampleRateValue;
    if (typeof service !== 'string' || typeof samplingRate !== 'number') return undefined;
    return new DefaultLogLine(logger, service, samplingRate, write);
  }

  /**
   * Notes the invocation's Lambda context, as the Logger's `injectLambdaContext` does with
   * `addContext` (the cold start is the first invocation's, in an on-demand environment), and the
   * X-Ray trace id, which Lambda sets per invocation. Call it once at the start of every invocation.
   */
  begin(context: Context): void {
    this.#invocations += 1;
    const coldStart = this.#onDemand && this.#invocations === 1;
    const { invokedFunctionArn, memoryLimitInMB, functionName } = context;
    // The members that are the same in every invocation of a function (its ARN, memory, name),
    // serialized again only when one of them differs from the last invocation's.
    const head = this.#head;
    if (
      head === undefined ||
      head.coldStart !== coldStart ||
      head.arn !== invokedFunctionArn ||
      head.memory !== memoryLimitInMB ||
      head.name !== functionName
    ) {
      const members =
        member('service', this.#service) +
        member('cold_start', coldStart) +
        member('function_arn', invokedFunctionArn) +
        member('function_memory_size', memoryLimitInMB) +
        member('function_name', functionName);
      this.#head = {
        coldStart,
        arn: invokedFunctionArn,
        memory: memoryLimitInMB,
        name: functionName,
        members,
      };
    }
    // Everything after the timestamp that stays the same for the whole invocation, in
    // Powertools' order (PowertoolsLogFormatter), each with its leading comma.
    this.#invocationMembers =
      (this.#head as FunctionMembers).members +
      member('function_request_id', context.awsRequestId) +
      member('sampling_rate', this.#samplingRate) +
      member('xray_trace_id', xrayTraceId()) +
      member('tenant_id', (context as { tenantId?: unknown }).tenantId);
  }

  /**
   * Writes an INFO line when the Logger's level lets INFO through; never throws. `extra` holds
   * the line's own keys, none of them one of the keys above (Powertools would put it in their place).
   */
  info(message: string, extra: Readonly<Record<string, LineValue>>): void {
    if (this.#logger.level > LogLevelThreshold.INFO) return;
    try {
      let line = '{"level":"INFO"';
      if (message !== '') line += `,"message":${JSON.stringify(message)}`;
      line += `,"timestamp":"${new Date().toISOString()}"`;
      line += this.#invocationMembers;
      for (const key in extra) line += member(key, extra[key]);
      this.#write(`${line}}\n`);
    } catch {
      // As the worker's other log calls (telemetry.ts fromPowertools): an outcome never depends on a line.
    }
  }
}

/** The serialized members of what every invocation of a function shares, and what they were made of. */
interface FunctionMembers {
  readonly coldStart: boolean;
  readonly arn: unknown;
  readonly memory: unknown;
  readonly name: unknown;
  readonly members: string;
}

/** `,"key":value`, or nothing for a value Powertools leaves out (undefined, '', null; and what JSON cannot write). */
function member(key: string, value: unknown): string {
  if (value === undefined || value === '' || value === null) return '';
  const json = JSON.stringify(value);
  return json === undefined ? '' : `,${keyJson(key)}:${json}`;
}

/** Keys as JSON strings, made once per key: a line's keys are the same few every time. */
const KEY_JSON = new Map<string, string>();

function keyJson(key: string): string {
  let json = KEY_JSON.get(key);
  if (json === undefined) {
    json = JSON.stringify(key);
    // Bounded: a caller with ever new keys gets them escaped each time instead.
    if (KEY_JSON.size < 100) KEY_JSON.set(key, json);
  }
  return json;
}

/**
 * The `Root` of the invocation's X-Ray trace header, as Powertools reads it: Lambda's invoke
 * store first, else `_X_AMZN_TRACE_ID`; a header without `=` is the root itself.
 */
function xrayTraceId(): string | undefined {
  const store = (
    globalThis as { awslambda?: { InvokeStore?: { getXRayTraceId?: () => string | undefined } } }
  ).awslambda?.InvokeStore;
  const header = store?.getXRayTraceId?.() ?? process.env._X_AMZN_TRACE_ID?.trim() ?? '';
  if (header === '') return undefined;
  if (!header.includes('=')) return header;
  let root: string | undefined;
  for (const field of header.split(';')) {
    const [key, value] = field.split('=');
    if (key === 'Root') root = value;
  }
  return root;
}
