/**
 * Runs one Lambda function's bundled code the way Lambda does: in execution environments that
 * each handle one invocation at a time, are reused while warm, and are thrown away after a
 * timeout or a crash. Each environment is a worker thread (function-host-thread.ts) with its
 * own `process.env`, so two functions never share environment variables or module state.
 *
 * Timeouts: an invocation gets the function's `Timeout`. When it runs out the thread is terminated
 * and the outcome is `timeout`; whatever the handler did until then stays done, as on Lambda. The
 * init phase (loading the module) has Lambda's limits (Lambda Developer Guide, "Understanding the
 * Lambda execution environment lifecycle", Init phase): on demand 10 s, after which Lambda retries
 * the init at the first invocation with the function's `Timeout` (here the init goes on, and the
 * invocation's `Timeout` counts from the end of the 10 s); with `prewarm` (provisioned
 * concurrency) 130 s or the `Timeout`, whichever is higher. A loaded machine can take more than
 * 10 s to load a bundle: failing the invocation then would fail batches that run on Lambda.
 */
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type {
  FunctionThreadData,
  InvokeMessage,
  ThreadError,
  ThreadMessage,
} from './function-host-thread.ts';

/** Lambda's limit for the init phase of an on-demand function, in milliseconds. */
export const INIT_TIMEOUT_MS = 10_000;
/**
 * Lambda's floor for the init limit of provisioned concurrency (the limit is this or the
 * function's `Timeout`, whichever is higher), in milliseconds.
 */
export const PROVISIONED_INIT_TIMEOUT_MS = 130_000;

/** A function as the host runs it. */
export interface HostedFunction {
  readonly logicalId: string;
  /** Physical function name. */
  readonly name: string;
  readonly arn: string;
  /** Handler string, e.g. `index.handler`. */
  readonly handler: string;
  /** Directory of the bundled code (the cloud assembly asset). */
  readonly assetDir: string;
  /** `Timeout` in seconds. */
  readonly timeoutSeconds: number;
  /** `MemorySize` in MB (informational: `AWS_LAMBDA_FUNCTION_MEMORY_SIZE`, context). */
  readonly memorySizeMb: number;
}

/** One line a function wrote to stdout or stderr. */
export interface FunctionLogLine {
  readonly functionLogicalId: string;
  readonly stream: 'stdout' | 'stderr';
  readonly line: string;
}

/** Options of {@link FunctionHost}. */
export interface FunctionHostOptions {
  readonly fn: HostedFunction;
  /** The complete environment of the function (nothing of the host's `process.env` is added). */
  readonly env: Readonly<Record<string, string>>;
  /** Where modules the Lambda runtime provides (`@aws-sdk/*`) are resolved from. */
  readonly projectRoot: string;
  /** Most environments (concurrent invocations) at once; more invocations wait. Integer >= 1. */
  readonly maxEnvironments: number;
  /** Receives the function's output lines; without it they are dropped. */
  readonly onLog?: (line: FunctionLogLine) => void;
  /**
   * On-demand init phase limit in milliseconds, before the init is retried within the first
   * invocation's `Timeout` (see the top of this file); not used with `prewarm`. @default INIT_TIMEOUT_MS
   */
  readonly initTimeoutMs?: number;
  /**
   * Keep `maxEnvironments` environments initialised, like provisioned concurrency: {@link
   * FunctionHost.warmUp} starts them, and one discarded after a timeout or crash is replaced at
   * once instead of on the next invocation. @default false
   */
  readonly prewarm?: boolean;
  /**
   * Fault injection: an environment dies at once when a `fetch` response of its function carries
   * `x-sqs-jobs-fault: kill-caller` (see function-host-thread.ts); its invocation ends as an
   * `error` (`Runtime.ExitError`), like a Lambda process killed right after a call's side effect.
   * @default false
   */
  readonly killOnFaultHeader?: boolean;
  /**
   * Stack traces (logs, dead-letter evidence) name the user's sources: each bundle is loaded with
   * its source map made to point at the project (source-maps.ts) and source maps are on. Off by
   * default: reading and applying a worker's multi-megabyte map slows every environment's init and
   * every stack trace, enough on a loaded machine to push invocations past short visibility
   * timeouts (`npm start`, the tests); `sqs-jobs local` turns it on. @default false
   */
  readonly sourceMaps?: boolean;
}

/** Result of one invocation. */
export type InvokeOutcome =
  | {
      readonly kind: 'success';
      readonly payload: unknown;
      readonly durationMs: number;
      readonly coldStart: boolean;
    }
  | {
      readonly kind: 'error';
      readonly error: ThreadError;
      readonly durationMs: number;
      readonly coldStart: boolean;
    }
  | { readonly kind: 'timeout'; readonly durationMs: number; readonly coldStart: boolean };

// Beside this module: the TypeScript source in the repository, or the bundled `.js` next to the
// published CLI (package.json "build:cli" bundles the thread as its own entry point).
const THREAD_URL = new URL(
  import.meta.url.endsWith('.ts') ? './function-host-thread.ts' : './function-host-thread.js',
  import.meta.url,
);

class ExecutionEnvironment {
  readonly ready: Promise<ThreadError | undefined>;
  dead = false;
  /** Whether init finished (the module is loaded); an invocation that has to wait for it is a cold start. */
  initialised = false;
  /**
   * On demand, when the init phase ran past its limit: the time (epoch ms) it did so, from which
   * the first invocation's `Timeout` counts (Lambda retries the init within that invocation).
   */
  initOverranAtMs: number | undefined;
  private readonly worker: Worker;
  private nextId = 1;
  private pending: { id: number; settle: (m: ThreadMessage | ThreadError) => void } | undefined;
  private settleReady: (value: ThreadError | undefined) => void = () => {};

  /** @param onDiscarded called once when the environment dies (not when it is terminated on purpose). */
  constructor(
    options: FunctionHostOptions,
    private readonly onDiscarded: () => void = () => {},
  ) {
    const { fn } = options;
    const workerData: FunctionThreadData = {
      assetDir: fn.assetDir,
      handler: fn.handler,
      projectRoot: options.projectRoot,
      functionName: fn.name,
      invokedFunctionArn: fn.arn,
      memorySizeMb: fn.memorySizeMb,
      logStreamName:
        options.env.AWS_LAMBDA_LOG_STREAM_NAME ?? `local/[$LATEST]${randomUUID().replace(/-/g, '')}`,
      ...(options.killOnFaultHeader ? { killOnFaultHeader: true } : {}),
      ...(options.sourceMaps ? { sourceMaps: true } : {}),
    };
    this.ready = new Promise((resolve) => {
      this.settleReady = resolve;
    });
    this.worker = new Worker(THREAD_URL, {
      env: { ...options.env },
      workerData,
      execArgv: [],
      stdout: true,
      stderr: true,
      name: `lambda:${fn.name}`,
    });
    for (const stream of ['stdout', 'stderr'] as const) {
      let buffer = '';
      this.worker[stream].on('data', (chunk: Buffer) => {
        if (!options.onLog) return;
        buffer += chunk.toString('utf8');
        const lines = buffer.split('\n');
        buffer = lines.pop() ?? '';
        for (const line of lines) options.onLog({ functionLogicalId: fn.logicalId, stream, line });
      });
    }
    const timeoutMs = fn.timeoutSeconds * 1000;
    const onDemandLimitMs = options.initTimeoutMs ?? INIT_TIMEOUT_MS;
    // On demand: the init limit, then its retry within the first invocation's Timeout.
    const initLimitMs = options.prewarm
      ? Math.max(PROVISIONED_INIT_TIMEOUT_MS, timeoutMs)
      : onDemandLimitMs + timeoutMs;
    const overrunTimer = options.prewarm
      ? undefined
      : setTimeout(() => {
          this.initOverranAtMs = Date.now();
        }, onDemandLimitMs);
    const initTimer = setTimeout(() => {
      this.fail({
        errorType: 'Runtime.InitTimeout',
        errorMessage: options.prewarm
          ? `init phase exceeded ${initLimitMs} ms (provisioned concurrency: 130 s or the function timeout, whichever is higher)`
          : `init phase exceeded ${onDemandLimitMs} ms, and its retry the function timeout (${timeoutMs} ms)`,
      });
    }, initLimitMs);
    this.ready.finally(() => {
      clearTimeout(initTimer);
      clearTimeout(overrunTimer);
    });
    this.worker.on('message', (message: ThreadMessage) => {
      if (message.type === 'ready') {
        this.initialised = true;
        this.settleReady(undefined);
      } else if (message.type === 'init-error' || message.type === 'crash' || message.type === 'killed')
        this.fail(message.error);
      else if (message.type === 'result' && this.pending?.id === message.id) {
        const { settle } = this.pending;
        this.pending = undefined;
        settle(message);
      }
    });
    this.worker.on('error', (error) => {
      this.fail({
        errorType: error.name || 'Runtime.ExitError',
        errorMessage: error.message,
        stack: error.stack,
      });
    });
    this.worker.on('exit', (code) => {
      this.fail({
        errorType: 'Runtime.ExitError',
        errorMessage: `execution environment exited with code ${code}`,
      });
    });
  }

  /** Marks the environment dead, fails what waits on it and stops the thread. */
  fail(error: ThreadError): void {
    if (!this.dead) {
      this.dead = true;
      void this.worker.terminate();
      this.onDiscarded();
    }
    this.settleReady(error);
    const pending = this.pending;
    this.pending = undefined;
    pending?.settle(error);
  }

  invoke(
    event: unknown,
    awsRequestId: string,
    deadlineMs: number,
    traceHeader: string | undefined,
  ): Promise<ThreadMessage | ThreadError> {
    const id = this.nextId++;
    return new Promise((settle) => {
      this.pending = { id, settle };
      const message: InvokeMessage = { type: 'invoke', id, event, awsRequestId, deadlineMs, traceHeader };
      this.worker.postMessage(message);
    });
  }

  async terminate(): Promise<void> {
    this.dead = true;
    await this.worker.terminate();
  }
}

/** Pool of execution environments of one function. */
export class FunctionHost {
  private options: FunctionHostOptions;
  private readonly all = new Set<ExecutionEnvironment>();
  /** Environments of code replaced by {@link reload}: ended when their invocation is. */
  private readonly outdated = new WeakSet<ExecutionEnvironment>();
  private readonly idle: ExecutionEnvironment[] = [];
  private readonly waiters: ((env: ExecutionEnvironment) => void)[] = [];
  private stopped = false;
  private created = 0;
  private discarded = 0;

  constructor(options: FunctionHostOptions) {
    if (!Number.isInteger(options.maxEnvironments) || options.maxEnvironments < 1) {
      throw new RangeError(`maxEnvironments must be an integer >= 1, got ${options.maxEnvironments}`);
    }
    this.options = options;
  }

  /** The function as it runs now (its code and settings as of the last {@link reload}). */
  get fn(): HostedFunction {
    return this.options.fn;
  }

  /**
   * Runs new code from now on, as a Lambda code update does: new invocations get environments
   * that load `fn` (its asset directory and handler) with `env`; idle environments are ended now,
   * busy ones once their invocation is done (it finishes on the code it started with). Nothing
   * queued for the function is touched.
   */
  reload(fn: HostedFunction, env: Readonly<Record<string, string>>): void {
    this.options = { ...this.options, fn, env };
    for (const environment of this.all) this.outdated.add(environment);
    for (const environment of this.idle.splice(0)) {
      this.all.delete(environment);
      void environment.terminate();
    }
    if (this.options.prewarm && !this.stopped) void this.warmUp();
  }

  /** Execution environments created so far. */
  get environmentsCreated(): number {
    return this.created;
  }

  /**
   * Execution environments discarded so far because they died: a timeout, a crash (also one after
   * the answer), an init failure or a kill. Those ended on purpose ({@link reload}, {@link stop})
   * are not counted.
   */
  get environmentsDiscarded(): number {
    return this.discarded;
  }

  /**
   * Creates environments up to `maxEnvironments` and waits for their init phase (an init error
   * is not thrown: the invocation that gets the environment reports it).
   */
  async warmUp(): Promise<void> {
    while (!this.stopped && this.all.size < this.options.maxEnvironments) this.idle.push(this.create());
    await Promise.all([...this.all].map((e) => e.ready));
  }

  /**
   * Invokes the function with `event` in a free execution environment (waiting for one when all
   * `maxEnvironments` are busy). Never rejects: failures are outcomes.
   * - `success`: the handler returned; `payload` is its JSON round trip (undefined → null).
   * - `error`: the handler threw or rejected, the module failed to load, or the thread crashed.
   * - `timeout`: the invocation ran past the function's `Timeout`; its environment is discarded.
   * @param traceHeader the invocation's `_X_AMZN_TRACE_ID` (Lambda sets one for every invocation).
   */
  async invoke(
    event: unknown,
    awsRequestId: string = randomUUID(),
    traceHeader?: string,
  ): Promise<InvokeOutcome> {
    if (this.stopped) {
      return { kind: 'error', error: stoppedError(), durationMs: 0, coldStart: false };
    }
    const env = await this.acquire();
    const coldStart = !env.initialised;
    const started = Date.now();
    try {
      const initError = await env.ready;
      if (initError) return { kind: 'error', error: initError, durationMs: Date.now() - started, coldStart };
      // After an init that ran past its on-demand limit, the Timeout counts from that moment:
      // Lambda runs the retried init within the first invocation's Timeout.
      const invokeStarted = Date.now();
      const overranAt = coldStart ? env.initOverranAtMs : undefined;
      const timeoutMs =
        this.fn.timeoutSeconds * 1000 - (overranAt === undefined ? 0 : invokeStarted - overranAt);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      const reply = await Promise.race([
        env.invoke(event, awsRequestId, invokeStarted + timeoutMs, traceHeader),
        timedOut,
      ]);
      clearTimeout(timer);
      const durationMs = Date.now() - invokeStarted;
      if (reply === 'timeout') {
        env.fail({
          errorType: 'Sandbox.Timedout',
          errorMessage: `Task timed out after ${this.fn.timeoutSeconds.toFixed(2)} seconds`,
        });
        return { kind: 'timeout', durationMs, coldStart };
      }
      if ('type' in reply) {
        if (reply.type === 'result' && reply.ok)
          return { kind: 'success', payload: reply.payload, durationMs, coldStart };
        if (reply.type === 'result' && !reply.ok)
          return { kind: 'error', error: reply.error, durationMs, coldStart };
      }
      return { kind: 'error', error: reply as ThreadError, durationMs, coldStart };
    } finally {
      this.release(env);
    }
  }

  /** Terminates every execution environment; later invocations fail at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    const envs = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.all(envs.map((e) => e.terminate()));
  }

  private async acquire(): Promise<ExecutionEnvironment> {
    for (;;) {
      const env = this.idle.pop();
      if (env === undefined) break;
      if (!env.dead) return env;
      this.all.delete(env);
    }
    if (this.all.size < this.options.maxEnvironments) return this.create();
    return new Promise<ExecutionEnvironment>((resolve) => this.waiters.push(resolve));
  }

  private create(): ExecutionEnvironment {
    const env = new ExecutionEnvironment(this.options, () => {
      this.discarded++;
    });
    this.all.add(env);
    this.created++;
    return env;
  }

  private release(env: ExecutionEnvironment): void {
    if (this.stopped) {
      void env.terminate();
      return;
    }
    let next: ExecutionEnvironment = env;
    if (env.dead || this.outdated.has(env)) {
      if (!env.dead) void env.terminate();
      this.all.delete(env);
      if (this.waiters.length === 0 && !this.options.prewarm) return;
      next = this.create();
    }
    const waiter = this.waiters.shift();
    if (waiter) waiter(next);
    else this.idle.push(next);
  }
}

function stoppedError(): ThreadError {
  return { errorType: 'LocalRuntime.Stopped', errorMessage: 'the local runtime is stopping' };
}
