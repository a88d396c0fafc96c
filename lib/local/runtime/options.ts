/**
 * What {@link startLocalRuntime} (runtime.ts) takes: its options, the environment variables it
 * reads, and its defaults.
 */

import type { AwsFaultRates } from '../aws-faults.ts';
import type { EmulatorPorts, EndpointOptions } from '../emulators.ts';
import type { InvocationReport } from '../event-source-mapping.ts';
import type { LocalCredentials } from '../function-config.ts';
import type { FunctionLogLine } from '../function-host.ts';
import type { EnsureSynthesizedOptions } from '../synth.ts';
import type { LocalSchedulerOptions } from './scheduler.ts';

/** Default pollers (concurrent invocations) of a mapping without `ScalingConfig.MaximumConcurrency`. */
export const DEFAULT_MAPPING_CONCURRENCY = 5;
/** Region when neither the option, `SQS_JOBS_REGION` nor the stack's environment gives one. */
export const DEFAULT_REGION = 'us-east-1';

/** Environment variables read by {@link startLocalRuntime} (besides the endpoint ones, see emulators.ts). */
export const RUNTIME_ENV = {
  /** Region of the local run. */
  region: 'SQS_JOBS_REGION',
  /** `1` / `true`: print the functions' output on stderr, prefixed with the function's logical id. */
  functionLogs: 'SQS_JOBS_FUNCTION_LOGS',
} as const;

/** Options of {@link startLocalRuntime}. Every field is optional. */
export interface LocalRuntimeOptions {
  /** Project root (cdk.json, node_modules). @default process.cwd() */
  readonly projectRoot?: string;
  /** Cloud assembly directory. @default `<projectRoot>/cdk.out` */
  readonly assemblyDir?: string;
  /**
   * `auto`: synthesize when cdk.out is missing or older than a source ({@link ensureSynthesized});
   * `always`; `never`: read cdk.out as it is. @default 'auto'
   */
  readonly synthesize?: 'auto' | 'always' | 'never';
  /** Custom synthesis, see {@link EnsureSynthesizedOptions.synthesize}. */
  readonly synthesizer?: EnsureSynthesizedOptions['synthesize'];
  /** Stack artifact id or name; needed only when the assembly holds several stacks. */
  readonly stackName?: string;
  /**
   * External endpoints; a service without one gets its embedded emulator. Read after these
   * options: `SQS_JOBS_ENDPOINT_URL`, `SQS_JOBS_SQS_ENDPOINT`, `SQS_JOBS_DYNAMODB_ENDPOINT`.
   */
  readonly endpoints?: EndpointOptions;
  /** Ports of the embedded emulators (fixed ports keep the endpoints across restarts). @default any free port */
  readonly ports?: EmulatorPorts;
  /** Where the `SQS_JOBS_*` variables are read from. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** @default env `SQS_JOBS_REGION`, else the stack's region, else 'us-east-1' */
  readonly region?: string;
  /** Credentials for the emulators and the functions. @default `local` / `local` */
  readonly credentials?: LocalCredentials;
  /** Template parameter values over their `Default`s. */
  readonly parameters?: Readonly<Record<string, unknown>>;
  /** Variables added to every function's environment (win over the template's). */
  readonly environment?: Readonly<Record<string, string>>;
  /**
   * Variables for one function, keyed by function selector (logical id, function name, or the
   * `JOBS_QUEUE_NAME` of its environment); they win over `environment`.
   */
  readonly functionEnvironment?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Pollers of a mapping without `MaximumConcurrency`. Integer >= 1. @default 5 */
  readonly defaultMaximumConcurrency?: number;
  /**
   * Probability in [0, 1] that a successful invocation's response is lost (the batch is treated
   * as failed after the function ran). A number for every function, or a map keyed by function
   * selector (`*` for the rest). @default 0
   */
  readonly lostResponseRate?: number | Readonly<Record<string, number>>;
  /** Seed of the fault decisions. @default 1 */
  readonly seed?: number;
  /**
   * The functions' stdout/stderr: `ignore`, `inherit` (to this process's stderr, each line
   * prefixed with `[logicalId]`), or a callback. @default `inherit` when env
   * `SQS_JOBS_FUNCTION_LOGS` is `1`/`true`, else `ignore`
   */
  readonly functionLogs?: 'ignore' | 'inherit' | ((line: FunctionLogLine) => void);
  /** Called after each invocation is settled. */
  readonly onInvocation?: (report: InvocationReport) => void;
  /** Poll / delete errors of the mappings (they retry on their own). @default ignored */
  readonly onError?: (error: unknown) => void;
  /**
   * Where the local runtime's notes go, one line each (a record held back by the emulated
   * recursive loop detection...). @default stderr, as `note: <text>`
   */
  readonly onNote?: (note: string) => void;
  /**
   * Called for each delivery the emulated recursive loop detection holds back (the note says it
   * too): the record stays in flight on `queueUrl` until its visibility timeout, or until a
   * `ChangeMessageVisibility` with `receiptHandle` makes it visible sooner (tests do, instead of
   * waiting for the timeout). `invocation` is the one it would have been in its chain (17 or more).
   */
  readonly onRecursionStopped?: (stop: {
    readonly functionLogicalId: string;
    readonly queueUrl: string;
    readonly messageId: string;
    readonly receiptHandle: string;
    readonly invocation: number;
  }) => void;
  /** Queues/tables that already exist on an external endpoint: `recreate` or `fail`. @default 'recreate' */
  readonly existingResources?: 'recreate' | 'fail';
  /** Long-poll wait of the mappings' ReceiveMessage calls, in seconds (0–20). @default 20 */
  readonly receiveWaitTimeSeconds?: number;
  /**
   * Initialise every function's execution environments (one per possible concurrent invocation)
   * before polling starts, and replace one discarded after a timeout or crash at once, like
   * provisioned concurrency: invocations then rarely wait for an init phase, whose limit is
   * provisioned concurrency's (130 s or the function timeout, whichever is higher). Without it an
   * environment starts on the invocation that needs it, as on-demand Lambda does (its init time
   * then runs against the queue's visibility timeout; an init past 10 s goes on within the
   * invocation's timeout, see function-host.ts). @default false
   */
  readonly prewarm?: boolean;
  /**
   * Fault injection at the AWS API boundary: a fault proxy (fault-proxy.ts) starts in front of
   * each endpoint (one per distinct endpoint), and the functions, the event source mappings'
   * pollers and clients on {@link LocalRuntime.endpoints} go through it and meet these faults
   * (throttling and 5xx of DynamoDB, 5xx of SQS send / receive / delete, responses lost after the
   * operation). The runtime's own clients ({@link LocalRuntime.sqs}, {@link LocalRuntime.dynamodb}:
   * provisioning, queue depths, reading results) are exempt. Seeded by `seed`. Undefined: no
   * proxy, the endpoints are the emulators'. @default undefined
   */
  readonly awsFaults?: Partial<AwsFaultRates>;
  /**
   * Fault injection: kill an execution environment when a `fetch` response of its function
   * carries `x-sqs-jobs-fault: kill-caller` (see {@link FunctionHostOptions.killOnFaultHeader}).
   * @default false
   */
  readonly killOnFaultHeader?: boolean;
  /**
   * Stack traces of the functions name the user's sources (see {@link FunctionHostOptions.sourceMaps});
   * `sqs-jobs local` turns it on. @default false
   */
  readonly sourceMaps?: boolean;
  /**
   * Receive from each FIFO queue one call at a time, short polls standing in for long polls
   * (see {@link EventSourceMappingPollerOptions.serializeFifoReceives}): for an SQS emulator whose
   * FIFO group lock does not hold under concurrent long polls (moto 5.2.1). @default false
   */
  readonly serializeFifoReceives?: boolean;
  /**
   * `VisibilityTimeout` of every queue an enabled event source mapping reads, in seconds (a local
   * override of the template's), set before polling starts: an emulator may take a long poll's
   * visibility timeout from the queue when the poll begins (moto does), so a change made later
   * would miss the first batches. Undefined keeps the template's. @default undefined
   */
  readonly visibilityTimeoutSeconds?: number;
  /**
   * The local EventBridge Scheduler: its clock (inject a `ManualClock` to move time in tests) and
   * the duplicate-delivery fault (probability that a schedule's firing is delivered twice, seeded
   * by `seed`). @default the system clock, no duplicates
   */
  readonly scheduler?: LocalSchedulerOptions;
}
