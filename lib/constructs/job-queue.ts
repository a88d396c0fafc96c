/**
 * `JobQueue`: one SQS queue (FIFO or standard), its dead-letter queue, the Lambda worker that
 * consumes it, and the alarms that say when it stops. Settings are checked when the construct
 * is created, by the rules in ./job-queue/rules (one module per group of settings, each citing
 * its AWS page); every unsafe setting is reported in one {@link JobsConfigError}.
 *
 * Why one file: it is the construct's constructor, making the queue, DLQ, worker, grants, mapping
 * and alarms in dependency order, read top to bottom; props, defaults, grants, bundling and rules
 * are in ./job-queue/.
 */
import { Annotations, Duration, Names, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  queueUrlEnvName,
  scheduleDlqArnEnvName,
  scheduleGroupEnvName,
  schedulerRoleEnvName,
} from '../core/queue-urls.ts';
import { validationsOf } from './cdk-features.ts';
import { JobsConfigError } from './errors.ts';
import {
  JOB_QUEUE_DEFAULTS,
  JOB_QUEUE_WARNINGS,
  JOBS_METRICS_NAMESPACE,
  NAME_PATTERN,
  XRAY_WRITE_ACTIONS,
} from './job-queue/defaults.ts';
import {
  CONSUME_QUEUE_ACTIONS,
  grantIdempotency,
  grantSend,
  mayParkGroups,
  mayWaitOnLimits,
} from './job-queue/grants.ts';
import type { JobQueueAlarms, JobQueueProps } from './job-queue/props.ts';
import {
  type RecurringJob,
  recurringJobInputProblems,
  recurringJobQueueOf,
  recurringJobsProblems,
} from './job-queue/recurring-jobs.ts';
import { checkJobQueue } from './job-queue/rules/index.ts';
import { takenNames, uniqueNameFindings } from './job-queue/rules/unique-name.ts';
import { type JobQueueScheduleAlarms, JobQueueScheduling } from './job-queue/scheduling.ts';
import { relativeSourceMapCommand } from './job-queue/source-map.ts';
import { ESM_REQUIRE_BANNER, TRACER_PACKAGE, tracerBundleCommand } from './job-queue/tracer-bundle.ts';

/** esbuild's target of the worker bundles: the function's runtime, nodejs24.x. */
const WORKER_BUNDLE_TARGET = 'node24';

export {
  IDEMPOTENCY_TABLE_ACTIONS,
  IDEMPOTENCY_UNPARK_ACTIONS,
  JOB_QUEUE_DEFAULTS,
  JOB_QUEUE_WARNINGS,
  JOBS_METRICS_NAMESPACE,
  XRAY_WRITE_ACTIONS,
} from './job-queue/defaults.ts';
export type { JobDefinitionLike, JobQueueAlarms, JobQueueProps } from './job-queue/props.ts';
export type { RecurringJob } from './job-queue/recurring-jobs.ts';
export type { JobQueueScheduleAlarms } from './job-queue/scheduling.ts';

/**
 * A queue of background jobs and its Lambda worker.
 *
 * Creates:
 * - the queue (FIFO or standard): SSE-SQS encryption at rest, a queue policy that denies
 *   requests without TLS, `MaximumMessageSize` set explicitly, a redrive policy to the DLQ with
 *   `maxReceiveCount` above `maxAttempts`;
 * - the dead-letter queue (unless one is given): same kind, 14 days retention, same encryption
 *   and TLS policy;
 * - the worker: a `NodejsFunction` on `nodejs24.x`, ARM64, bundled by the local esbuild as a
 *   minified ESM bundle with source maps (the AWS SDK included, so the tested versions are the
 *   deployed ones); its own log group and a role that may only write its logs, consume and
 *   change visibility on its queue, send (nothing else) to its DLQ and enqueue targets, and the
 *   item commands the runtime sends to the idempotency table, DeleteItem only where a FIFO group
 *   can be parked (./job-queue/grants.ts; docs/deploy.md, "Worker permissions");
 * - X-Ray active tracing on the worker (`tracing`, default `Tracing.ACTIVE`), with a policy of
 *   its own on the role for the two X-Ray write actions [lambda-x-ray] [list_awsx-ray];
 * - the SQS event source with `ReportBatchItemFailures` always on [services-sqs-errorhandling];
 * - eight alarms ({@link JobQueueAlarms}), with the alarm topic as action when given;
 * - only when the queue uses time (`recurringJobs`, {@link addRecurringJob},
 *   {@link grantScheduleJobs}): an EventBridge Scheduler schedule group, the scheduler's role
 *   (sends to this queue only), a standard schedule DLQ, two more alarms
 *   ({@link JobQueueScheduleAlarms}), one schedule per recurring job, and on FIFO
 *   `ContentBasedDeduplication` (docs/deploy.md, "Recurring jobs"; see {@link scheduleGroupName}).
 *
 * AWS pages cited in brackets:
 * - services-sqs-configure: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html
 * - services-sqs-parameters: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-parameters.html
 * - services-sqs-scaling: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html
 * - services-sqs-errorhandling: https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html
 * - sqs-dead-letter-queues: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
 * - invocation-recursion: https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html
 * - setting-up-dead-letter-queue-retention: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/setting-up-dead-letter-queue-retention.html
 * - high-throughput-fifo: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/high-throughput-fifo.html
 * - quotas-messages: https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
 * - lambda-x-ray: https://docs.aws.amazon.com/lambda/latest/dg/services-xray.html
 * - list_awsx-ray: https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsx-ray.html
 *
 * Worker environment (docs/contracts.md): `JOBS_QUEUE_NAME`, `JOBS_QUEUE_URL`, `JOBS_DLQ_URL`,
 * `JOBS_MAX_ATTEMPTS` and `JOBS_JOB_TIMEOUT_SECONDS` (the effective `maxAttempts` and
 * `jobTimeoutSeconds`: the worker refuses to run a job that needs more attempts or time than the
 * queue was built for, so every job it runs must be in `jobs` or within these props),
 * `JOBS_IDEMPOTENCY_TABLE` (unless `idempotencyTable` is `false`), `JOBS_QUEUE_URL_<NAME>` per enqueue target,
 * `JOBS_HANDLER_VERSION`, `POWERTOOLS_SERVICE_NAME` (`sqs-jobs-<name>`),
 * `POWERTOOLS_METRICS_NAMESPACE` (`SqsJobs`), plus `environment`.
 *
 * Validation happens in the constructor, before anything is created or bundled: it is plain
 * data (plus a look at the entry file and the lock file), known at once, and failing at
 * `new JobQueue(...)` points the stack trace at the caller. Print the error's message without
 * the Node stack with `runJobsApp` (./checks.ts).
 *
 * Warnings (CDK annotations, shown by `cdk synth`; acknowledge with
 * `Annotations.of(scope).acknowledgeWarning(id, reason)`): `sqs-jobs:noAlarmTopic` when
 * `alarmTopic` is left out, `sqs-jobs:lowMaxReceiveCount` when `maxReceiveCount` is below 5,
 * `sqs-jobs:deadLetterRetentionUnknown` when a given DLQ's retention cannot be read,
 * `sqs-jobs:selfEnqueueRecursiveLoop` when the queue is its own enqueue target and `recursiveLoop`
 * is left out, `sqs-jobs:parkOnStandardQueue` when `onDeadLetter` or a job of `jobs` asks to park
 * on a standard queue.
 *
 * @example
 * ```ts
 * import { Stack } from 'aws-cdk-lib';
 * import { defineJob } from 'sqs-jobs';
 * import { createJobsApp, IdempotencyTable, JobQueue } from 'sqs-jobs/cdk';
 * import { z } from 'zod';
 *
 * const issueInvoice = defineJob({
 *   type: 'billing.issue-invoice',
 *   queue: 'billing',
 *   schema: z.object({ orderId: z.string() }),
 *   async run() {},
 * });
 *
 * const app = createJobsApp(); // cdk-nag and template validator findings as errors
 * const stack = new Stack(app, 'Billing');
 * const table = new IdempotencyTable(stack, 'Idempotency');
 * new JobQueue(stack, 'BillingQueue', {
 *   name: 'billing',
 *   entry: 'workers/billing.ts', // exports `handler = createWorker(...)`; relative to projectRoot
 *   jobs: [issueInvoice], // maxAttempts and jobTimeoutSeconds follow from them
 *   idempotencyTable: table.table,
 * });
 * app.synth();
 * ```
 *
 * @throws {JobsConfigError} listing every problem, one line each starting with the prop's name
 *   (the rules live in ./job-queue/rules, one module per group, each citing its AWS page):
 *   - required: `name`, `entry`, `idempotencyTable` (a table or `false`), and `maxAttempts` /
 *     `jobTimeoutSeconds` unless `jobs` gives them; `name` malformed or already used by another
 *     JobQueue of the stack;
 *   - jobs: empty, malformed, a type twice, a job sent to another queue, or an explicit
 *     `maxAttempts` / `jobTimeoutSeconds` below what a job needs;
 *   - `onDeadLetter` other than `'continue'` or `'park'`; parking (`onDeadLetter` or a job of
 *     `jobs` says `'park'`) with `idempotencyTable: false`;
 *   - entry: not a JavaScript/TypeScript file, missing, outside `projectRoot`, or not exporting
 *     `handler`; no lock file found (or several in one directory); `projectRoot` not a directory;
 *   - the DLQ kind differs from the queue's [sqs-dead-letter-queues]; on a standard queue, a DLQ
 *     that keeps messages no longer than the queue [setting-up-dead-letter-queue-retention];
 *     `maxReceiveCount` at or
 *     below `maxAttempts` or above 1,000; `jobTimeoutSeconds` not below the function timeout, or
 *     the function timeout above 15 minutes;
 *   - `batchSize` over 10 on FIFO, over 10,000 on standard, or over 10 on standard without a
 *     batching window of at least 1 s; a batching window on FIFO or above 5 minutes
 *     [services-sqs-parameters]; `maxConcurrency` outside 2–1000 or above `reservedConcurrency`
 *     [services-sqs-scaling]; `visibilityTimeout` below 6 × the function timeout plus the
 *     batching window or above 12 hours [services-sqs-configure]; the message size outside
 *     1 KiB–1 MiB or not whole [quotas-messages]; high-throughput FIFO settings inconsistent or set on a
 *     standard queue [high-throughput-fifo]; an invalid enqueue target name;
 *   - `functionTimeout`, `maxBatchingWindow`, `visibilityTimeout` or `retentionPeriod` not whole
 *     seconds; `functionTimeout` below 1 second; `retentionPeriod` outside 60 seconds – 14 days;
 *   - `memorySizeMb` not a whole number of MB from 128 to 10,240 [configuration-memory];
 *     `ageOfOldestMessageAlarmThreshold` below 1 second, not whole seconds, or not below
 *     `retentionPeriod`; `environment` naming a variable the construct sets (docs/contracts.md).
 */
export class JobQueue extends Construct {
  /** Logical name (`props.name`). */
  readonly name: string;
  /** Whether the queue is FIFO. */
  readonly fifo: boolean;
  /** The main queue the worker consumes. */
  readonly queue: sqs.Queue;
  /** The dead-letter queue: created, or the one passed in. */
  readonly deadLetterQueue: sqs.IQueue;
  /** The worker function. */
  readonly worker: nodejs.NodejsFunction;
  /** The worker's log group. */
  readonly logGroup: logs.LogGroup;
  /** The SQS event source mapping (`ReportBatchItemFailures` on). */
  readonly eventSource: lambda.EventSourceMapping;
  /**
   * Whether the worker may park a FIFO message group (a FIFO queue whose `onDeadLetter`, or one
   * of whose `jobs`, is `'park'`, or whose `jobs` are not given); only then may its role delete
   * items of the idempotency table (the unpark).
   */
  readonly mayParkGroups: boolean;
  /** The alarms of this queue and worker. */
  readonly alarms: JobQueueAlarms;
  /** The redrive policy's `maxReceiveCount` in effect. */
  readonly maxReceiveCount: number;
  /** The function timeout in effect. */
  readonly functionTimeout: Duration;
  /** The queue's visibility timeout in effect. */
  readonly visibilityTimeout: Duration;

  /** The effective `maxAttempts`: the prop, else the highest `retry.maxAttempts` of `jobs`. */
  readonly maxAttempts: number;
  /** The effective `jobTimeoutSeconds`: the prop, else the highest `timeoutSeconds` of `jobs`, in seconds. */
  readonly jobTimeoutSeconds: number;

  /** X-Ray tracing of the worker in effect (`tracing`, default `Tracing.ACTIVE`). */
  readonly tracing: lambda.Tracing;
  /** The X-Ray write policy on the worker's role; undefined when `tracing` is `DISABLED`. */
  readonly tracingPolicy: iam.Policy | undefined;

  /** `recursiveLoop` as given; undefined = Lambda's default (Terminate), not chosen. */
  readonly recursiveLoop: lambda.RecursiveLoop | undefined;

  private readonly enqueueTargetNames = new Set<string>();
  /** Made on first use of time (see {@link scheduleGroupName}). */
  private scheduling: JobQueueScheduling | undefined;
  private readonly recurringJobNames = new Set<string>();
  private readonly timeSettings: {
    readonly alarmTopic: JobQueueProps['alarmTopic'];
    readonly idempotencyTable: JobQueueProps['idempotencyTable'];
    readonly maxMessageSizeBytes: number;
    readonly jobs: JobQueueProps['jobs'];
  };

  constructor(scope: Construct, id: string, props: JobQueueProps) {
    super(scope, id);
    // JavaScript callers may pass nothing at all: report every required prop, do not crash.
    props = (typeof props === 'object' && props !== null ? props : {}) as JobQueueProps;
    const stack = Stack.of(this);
    const check = checkJobQueue(props);
    const problems = [
      ...check.errors,
      ...uniqueNameFindings(props.name, takenNames(stack)).map((f) => f.message),
    ];
    if (problems.length > 0) {
      const what =
        typeof props.name === 'string' && props.name !== '' ? `JobQueue '${props.name}'` : 'JobQueue';
      throw new JobsConfigError(what, this.node.path, problems);
    }
    takenNames(stack).set(props.name, this.node.path);
    for (const w of check.warnings) Annotations.of(this).addWarningV2(w.id, w.message);

    // The rules refused every setting these could be undefined for.
    const settings = check.settings;
    const maxReceiveCount = settings.maxReceiveCount!;
    const functionTimeout = settings.functionTimeout!;
    const visibilityTimeout = settings.visibilityTimeout!;
    this.name = props.name;
    this.fifo = settings.fifo;
    this.maxAttempts = settings.maxAttempts!;
    this.jobTimeoutSeconds = settings.jobTimeoutSeconds!;
    this.maxReceiveCount = maxReceiveCount;
    this.recursiveLoop = props.recursiveLoop;
    this.tracing = props.tracing ?? lambda.Tracing.ACTIVE;
    this.functionTimeout = functionTimeout;
    this.visibilityTimeout = visibilityTimeout;

    const fifoProps = settings.fifo
      ? {
          fifo: true,
          deduplicationScope: props.deduplicationScope,
          fifoThroughputLimit: props.fifoThroughputLimit,
        }
      : {};

    this.deadLetterQueue =
      props.deadLetterQueue ??
      new sqs.Queue(this, 'DeadLetterQueue', {
        fifo: settings.fifo ? true : undefined,
        queueName: settings.fifo ? fifoQueueName(this, 'dlq') : undefined,
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: JOB_QUEUE_DEFAULTS.deadLetterRetentionPeriod,
        maxMessageSizeBytes: settings.maxMessageSizeBytes,
      });

    this.queue = new sqs.Queue(this, 'Queue', {
      ...fifoProps,
      queueName: settings.fifo ? fifoQueueName(this, 'queue') : undefined,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout,
      retentionPeriod: props.retentionPeriod ?? JOB_QUEUE_DEFAULTS.retentionPeriod,
      maxMessageSizeBytes: settings.maxMessageSizeBytes,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount },
    });

    this.logGroup = new logs.LogGroup(this, 'WorkerLogs', {
      retention: props.logRetention ?? JOB_QUEUE_DEFAULTS.logRetention,
    });
    const role = new iam.Role(this, 'WorkerRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `sqs-jobs worker of queue ${props.name}: its logs, its queues, the idempotency table`,
    });
    this.logGroup.grantWrite(role);

    this.worker = new nodejs.NodejsFunction(this, 'Worker', {
      entry: settings.entryPath,
      handler: settings.handler,
      // NodejsFunction wants the entry and the lock file under its projectRoot: in a monorepo
      // that is the repository root above the app's projectRoot.
      projectRoot: settings.bundlingRoot,
      depsLockFilePath: settings.lockFile.kind === 'found' ? settings.lockFile.path : undefined,
      description: `sqs-jobs worker of queue ${props.name}`,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySizeMb ?? JOB_QUEUE_DEFAULTS.memorySizeMb,
      timeout: functionTimeout,
      reservedConcurrentExecutions: props.reservedConcurrency,
      recursiveLoop: props.recursiveLoop,
      role,
      logGroup: this.logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      bundling: {
        format: nodejs.OutputFormat.ESM,
        target: WORKER_BUNDLE_TARGET,
        minify: true,
        // Error class names are DLQ evidence (ErrorName) and the operators' grouping key:
        // minification must not turn EnvelopeError into `kt`.
        keepNames: true,
        sourceMap: true,
        // The AWS SDK is bundled: the deployed versions are the ones the tests ran against.
        bundleAwsSDK: true,
        // The X-Ray tracer is not: it goes into a file of its own (afterBundling below), read
        // on the first sampled invocation only instead of at every cold start.
        externalModules: [TRACER_PACKAGE],
        mainFields: ['module', 'main'],
        // Bundled CommonJS dependencies call require(); an ESM bundle has none unless defined.
        banner: ESM_REQUIRE_BANNER,
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (inputDir, outputDir) => [
            // Source-map paths relative to the project, not to the assembly directory: the code asset
            // hash (and so the default JOBS_HANDLER_VERSION) must not change with `cdk.out`'s location.
            relativeSourceMapCommand(inputDir, outputDir),
            // xray-tracer.mjs beside index.mjs (lib/constructs/job-queue/tracer-bundle.ts).
            tracerBundleCommand({
              inputDir,
              outputDir,
              bundlingRoot: settings.bundlingRoot ?? inputDir,
              target: WORKER_BUNDLE_TARGET,
            }),
          ],
        },
      },
      environment: {
        ...props.environment,
        JOBS_QUEUE_NAME: props.name,
        JOBS_QUEUE_URL: this.queue.queueUrl,
        JOBS_DLQ_URL: this.deadLetterQueue.queueUrl,
        // What the queue was built for: the worker refuses jobs that need more (docs/contracts.md).
        JOBS_MAX_ATTEMPTS: String(this.maxAttempts),
        JOBS_JOB_TIMEOUT_SECONDS: String(this.jobTimeoutSeconds),
        POWERTOOLS_SERVICE_NAME: `sqs-jobs-${props.name}`,
        POWERTOOLS_METRICS_NAMESPACE: JOBS_METRICS_NAMESPACE,
        // Mapped stack traces cost every cold start and the first error stack (props.sourceMaps).
        ...(props.sourceMaps === true ? { NODE_OPTIONS: '--enable-source-maps' } : {}),
      },
    });
    const cfnWorker = this.worker.node.defaultChild as lambda.CfnFunction;
    this.tracingPolicy = this.addTracing(role, cfnWorker);
    // Lets tools find a queue's worker (and its code asset) in the synthesized template.
    cfnWorker.addMetadata('sqs-jobs:queue', props.name);
    this.worker.addEnvironment('JOBS_HANDLER_VERSION', props.handlerVersion ?? codeAssetHash(cfnWorker));

    this.mayParkGroups = mayParkGroups({
      fifo: settings.fifo,
      onDeadLetter: props.onDeadLetter,
      jobs: props.jobs,
    });
    // The worker refuses to park where the role may not clear a park (docs/contracts.md).
    this.worker.addEnvironment('JOBS_GROUP_PARKING', String(this.mayParkGroups));
    if (props.idempotencyTable !== false) {
      this.worker.addEnvironment('JOBS_IDEMPOTENCY_TABLE', props.idempotencyTable.tableName);
      // Item-level reads and conditional writes of the idempotency records, nothing table-wide;
      // DeleteItem only where a group can be parked (it is the unpark).
      grantIdempotency(role, props.idempotencyTable, this.mayParkGroups);
    }

    // The worker sends dead-lettered jobs with their evidence itself; SQS redrive is the safety net.
    grantSend(role, this.deadLetterQueue);

    // The mapping SqsEventSource would make (same construct id, so the same logical id), without
    // its grant: that one adds GetQueueUrl, which neither Lambda's poller nor the worker calls.
    this.eventSource = this.worker.addEventSourceMapping(
      `SqsEventSource:${Names.nodeUniqueId(this.queue.node)}`,
      {
        eventSourceArn: this.queue.queueArn,
        batchSize: settings.batchSize,
        maxBatchingWindow: props.maxBatchingWindow,
        maxConcurrency: props.maxConcurrency,
        reportBatchItemFailures: true,
      },
    );
    this.queue.grant(role, ...CONSUME_QUEUE_ACTIONS);
    // A job over a flow-control limit waits as a delayed copy of its message on a standard queue.
    if (mayWaitOnLimits({ fifo: settings.fifo, jobs: props.jobs })) grantSend(role, this.queue);

    for (const [name, queue] of Object.entries(props.enqueueTargets ?? {}))
      this.addEnqueueTarget(name, queue);

    this.alarms = this.createAlarms(props);
    this.notify(Object.values(this.alarms) as cloudwatch.Alarm[], props.alarmTopic);

    this.timeSettings = {
      alarmTopic: props.alarmTopic,
      idempotencyTable: props.idempotencyTable,
      maxMessageSizeBytes: settings.maxMessageSizeBytes,
      jobs: props.jobs,
    };
    // Checked with the other props above (rules/recurring-jobs.ts); their Input here.
    this.createRecurringJobs(props.recurringJobs ?? []);
  }

  /** The alarm topic (when given) as action on ALARM and on OK. */
  private notify(alarms: readonly cloudwatch.Alarm[], topic: JobQueueProps['alarmTopic']): void {
    if (topic === undefined || topic === false) return;
    const action = new cloudwatchActions.SnsAction(topic);
    for (const alarm of alarms) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }

  /**
   * The queue's scheduling resources, made on first use (./job-queue/scheduling.ts): the
   * schedule group, the scheduler's role, the schedule DLQ and its two alarms (on the alarm
   * topic), and, on a FIFO queue, content-based deduplication (EventBridge Scheduler's SQS target
   * sends no deduplication id; JobClient's explicit ids still win).
   */
  private useScheduling(): JobQueueScheduling {
    if (this.scheduling !== undefined) return this.scheduling;
    const scheduling = new JobQueueScheduling(this, 'Scheduling', {
      queueName: this.name,
      queue: this.queue,
      fifo: this.fifo,
      maxMessageSizeBytes: this.timeSettings.maxMessageSizeBytes,
    });
    if (this.fifo) (this.queue.node.defaultChild as sqs.CfnQueue).contentBasedDeduplication = true;
    this.notify(Object.values(scheduling.alarms) as cloudwatch.Alarm[], this.timeSettings.alarmTopic);
    this.scheduling = scheduling;
    return scheduling;
  }

  /**
   * Name of the queue's EventBridge Scheduler schedule group: `<stack name>-<name>`, at most 64
   * characters (a long stack name is cut and followed by a hash). Every recurring job and every
   * one-time job sent for later is a schedule in it; the group goes with the stack, and its
   * schedules with it.
   *
   * The scheduling resources (group, {@link schedulerRole}, {@link scheduleDeadLetterQueue},
   * {@link scheduleAlarms}, content-based deduplication on FIFO) are made on first use: by
   * `recurringJobs`, {@link addRecurringJob}, {@link grantScheduleJobs} or by reading this or the
   * two properties after it. A queue that never uses time synthesizes as before.
   */
  get scheduleGroupName(): string {
    return this.useScheduling().groupName;
  }

  /**
   * The role EventBridge Scheduler assumes to deliver the queue's scheduled jobs: trusted by
   * `scheduler.amazonaws.com` for this account and schedule group only; may `sqs:SendMessage` to
   * this queue and to {@link scheduleDeadLetterQueue}, nothing else (plus `kms:GenerateDataKey` /
   * `kms:Decrypt` on a queue's KMS key). Made on first use (see {@link scheduleGroupName}).
   */
  get schedulerRole(): iam.IRole {
    return this.useScheduling().role;
  }

  /**
   * Where EventBridge Scheduler puts a scheduled job it could not deliver after its retry policy:
   * a standard queue (Scheduler takes no FIFO DLQ, whatever the queue's kind), SSE-SQS, TLS only,
   * 14 days, alarmed when not empty. Each message is a dead-letter event (the error and the
   * firing). Made on first use (see {@link scheduleGroupName}).
   */
  get scheduleDeadLetterQueue(): sqs.IQueue {
    return this.useScheduling().deadLetterQueue;
  }

  /** The alarms of the queue's schedules; undefined while the queue does not use time (nothing is made by reading this). */
  get scheduleAlarms(): JobQueueScheduleAlarms | undefined {
    return this.scheduling?.alarms;
  }

  /** Names of the queue's recurring jobs (schedule names in its group). */
  get recurringJobs(): readonly string[] {
    return [...this.recurringJobNames];
  }

  /**
   * Adds a recurring job (like `recurringJobs`): one `AWS::Scheduler::Schedule` in the queue's
   * group, checked as `recurringJobs` are.
   * @throws {JobsConfigError} listing what is wrong with `job`, or its name already used.
   */
  addRecurringJob(job: RecurringJob): void {
    const queue = recurringJobQueueOf(
      { name: this.name, jobs: this.timeSettings.jobs },
      this.fifo,
      this.timeSettings.maxMessageSizeBytes,
    );
    const problems = recurringJobsProblems([job], queue, this.recurringJobNames);
    if (problems.length > 0) throw new JobsConfigError(`JobQueue '${this.name}'`, this.node.path, problems);
    this.createRecurringJobs([job]);
  }

  /**
   * The schedules of checked recurring jobs. Their Input is checked here, on the exact text each
   * schedule carries: its envelope source names the schedule group, known only now.
   * @throws {JobsConfigError} when an Input is above EventBridge Scheduler's limit or a firing
   *   would not fit the queue.
   */
  private createRecurringJobs(jobs: readonly RecurringJob[]): void {
    if (jobs.length === 0) return;
    const scheduling = this.useScheduling();
    const problems = jobs.flatMap((job) =>
      recurringJobInputProblems(
        job,
        scheduling.recurringJobInputText(job),
        this.timeSettings.maxMessageSizeBytes,
      ),
    );
    if (problems.length > 0) throw new JobsConfigError(`JobQueue '${this.name}'`, this.node.path, problems);
    for (const job of jobs) {
      scheduling.addRecurringJob(job);
      this.recurringJobNames.add(job.name);
    }
  }

  /**
   * Lets `grantee` (a producer) send jobs to this queue for later with JobClient (`runAt`,
   * `delaySeconds` beyond 15 minutes, `cancel`, `reschedule`; docs/contracts.md):
   * - `scheduler:CreateSchedule|UpdateSchedule|DeleteSchedule|GetSchedule` on the schedules of the
   *   queue's group only (`arn:…:schedule/<group>/*`; its cdk-nag IAM5 finding is acknowledged on
   *   the grantee for that resource alone);
   * - `iam:PassRole` on {@link schedulerRole}, with `iam:PassedToService` = `scheduler.amazonaws.com`;
   * - `dynamodb:GetItem|PutItem|UpdateItem` on the idempotency table, for partition keys
   *   `schedule#*` only (`dynamodb:LeadingKeys`): the one-time jobs' state items;
   * - `sqs:SendMessage` on the queue (delays up to 15 minutes go with `DelaySeconds`).
   *
   * When `grantee` is a Lambda function, it also gets `JOBS_SCHEDULE_GROUP_<NAME>`,
   * `JOBS_SCHEDULER_ROLE_ARN_<NAME>`, `JOBS_SCHEDULE_DLQ_ARN_<NAME>` (the schedule dead-letter
   * queue, which the scheduler role may already send to), `JOBS_QUEUE_URL_<NAME>` and `JOBS_IDEMPOTENCY_TABLE`
   * (`<NAME>`: the queue's name upper-cased, `-` → `_`). Makes the scheduling resources
   * (see {@link scheduleGroupName}).
   * @throws {JobsConfigError} when the queue has `idempotencyTable: false` (the one-time jobs'
   *   state lives in that table).
   */
  grantScheduleJobs(grantee: iam.IGrantable): void {
    const table = this.timeSettings.idempotencyTable;
    if (table === false)
      throw new JobsConfigError(`JobQueue '${this.name}'`, this.node.path, [
        'grantScheduleJobs: the queue has idempotencyTable: false, but a job sent for later keeps its state (pending, cancelled, started) in the idempotency table: pass the table to the JobQueue',
      ]);
    const scheduling = this.useScheduling();
    scheduling.grantScheduleJobs(grantee, table);
    if (grantee instanceof lambda.Function) {
      grantee.addEnvironment(scheduleGroupEnvName(this.name), scheduling.groupName);
      grantee.addEnvironment(schedulerRoleEnvName(this.name), scheduling.role.roleArn);
      grantee.addEnvironment(scheduleDlqArnEnvName(this.name), scheduling.deadLetterQueue.queueArn);
      grantee.addEnvironment(queueUrlEnvName(this.name), this.queue.queueUrl);
      grantee.addEnvironment('JOBS_IDEMPOTENCY_TABLE', table.tableName);
    }
  }

  /**
   * X-Ray tracing as `NodejsFunction`'s own `tracing` prop would set it, except for the policy:
   * CDK puts `xray:*` on `*` into the role's default policy, where acknowledging cdk-nag's
   * `AwsSolutions-IAM5[Resource::*]` would also hide any later wildcard of the queue, DLQ or table
   * grants. Here the two write actions get a policy of their own (under the role, so the function
   * depends on it: Lambda checks the role's X-Ray permissions when the function is created with
   * tracing) and the finding is acknowledged on that policy only [list_awsx-ray].
   */
  private addTracing(role: iam.Role, cfnWorker: lambda.CfnFunction): iam.Policy | undefined {
    if (this.tracing === lambda.Tracing.DISABLED) return undefined;
    cfnWorker.tracingConfig = { mode: this.tracing };
    const policy = new iam.Policy(role, 'XRayWrite', {
      roles: [role],
      statements: [
        new iam.PolicyStatement({
          actions: [...XRAY_WRITE_ACTIONS],
          // Neither action takes a resource ARN [list_awsx-ray].
          resources: ['*'],
        }),
      ],
    });
    // Without Validations (aws-cdk-lib before 2.257) there is no cdk-nag 3 to acknowledge it to.
    validationsOf(policy)?.acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions (Service Authorization Reference, AWS X-Ray: no resource type), so Resource must be *; this policy holds only these two write actions of the X-Ray tracing of the worker',
    });
    return policy;
  }

  /**
   * Lets the worker's jobs enqueue to `queue`: sets `JOBS_QUEUE_URL_<NAME>` and grants send.
   * Use it for targets created after this queue, and for the queue itself (job chaining). The
   * queue itself with `recursiveLoop` left out adds the warning `sqs-jobs:selfEnqueueRecursiveLoop`:
   * Lambda stops such a chain after about 16 hops [invocation-recursion].
   * @throws {JobsConfigError} when `name` is not a valid logical name or was added before.
   */
  addEnqueueTarget(name: string, queue: sqs.IQueue): void {
    const problems: string[] = [];
    if (!NAME_PATTERN.test(name))
      problems.push(`enqueueTargets: '${name}' is not a valid logical queue name`);
    if (this.enqueueTargetNames.has(name))
      problems.push(`enqueueTargets: '${name}' is already an enqueue target`);
    if (problems.length > 0) throw new JobsConfigError(`JobQueue '${this.name}'`, this.node.path, problems);
    this.enqueueTargetNames.add(name);
    if (
      this.recursiveLoop === undefined &&
      (queue === this.queue || queue.queueArn === this.queue.queueArn)
    ) {
      Annotations.of(this).addWarningV2(
        JOB_QUEUE_WARNINGS.selfEnqueueRecursiveLoop,
        `recursiveLoop: this queue is its own enqueue target ('${name}') and the worker keeps Lambda's default (Terminate): a chain of jobs that re-enqueue themselves (polling, pagination) is stopped after about 16 invocations and its next job never runs [invocation-recursion]; pass recursiveLoop: lambda.RecursiveLoop.ALLOW for longer chains (bounded by the job), or RecursiveLoop.TERMINATE when chains stay short`,
      );
    }
    this.worker.addEnvironment(queueUrlEnvName(name), queue.queueUrl);
    grantSend(this.worker, queue);
  }

  /** Logical names of the queues this worker may enqueue to. */
  get enqueueTargets(): readonly string[] {
    return [...this.enqueueTargetNames];
  }

  /** A worker metric of namespace `SqsJobs` with dimension `Queue` = this queue's name (docs/contracts.md). */
  metricJobs(
    metricName:
      | 'JobCompleted'
      | 'JobRetried'
      | 'JobDeadLettered'
      | 'JobDuplicateAbsorbed'
      | 'JobDuration'
      | 'BatchFailed'
      | 'BatchOverdue',
    options: cloudwatch.MetricOptions = {},
  ): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: JOBS_METRICS_NAMESPACE,
      metricName,
      dimensionsMap: { Queue: this.name },
      statistic: metricName === 'JobDuration' ? 'Average' : 'Sum',
      period: Duration.minutes(1),
      ...options,
    });
  }

  private createAlarms(props: JobQueueProps): JobQueueAlarms {
    const oneMinute = Duration.minutes(1);
    const fiveMinutes = Duration.minutes(5);
    const ageThreshold =
      props.ageOfOldestMessageAlarmThreshold ?? JOB_QUEUE_DEFAULTS.ageOfOldestMessageAlarmThreshold;
    const q = `queue ${props.name}`;
    return {
      deadLetterQueueDepth: new cloudwatch.Alarm(this, 'DeadLetterQueueDepthAlarm', {
        alarmDescription: `${q}: the dead-letter queue holds at least one message. A job failed permanently or used up its attempts: inspect the DLQ evidence, fix, then redrive.`,
        metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: oneMinute,
          statistic: 'Maximum',
        }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      deadLetterQueueArrivals: new cloudwatch.Alarm(this, 'DeadLetterQueueArrivalsAlarm', {
        alarmDescription: `${q}: more messages in the dead-letter queue than a minute before: a job was dead-lettered (by the worker or by the redrive policy) while earlier ones may still be waiting. The depth alarm notifies only when the DLQ stops being empty; this one on every new arrival.`,
        // DIFF of the DLQ's total per minute: > 0 exactly when messages arrived. Visible + in
        // flight, so an operator listing the DLQ (messages in flight, then visible again) is no
        // arrival, and a redrive or deletion (a decrease) is none either. The DLQ's
        // NumberOfMessagesSent would miss messages moved by the redrive policy [sqs-dead-letter-queues].
        metric: new cloudwatch.MathExpression({
          expression: 'DIFF(visible + inFlight)',
          usingMetrics: {
            visible: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
              period: oneMinute,
              statistic: 'Maximum',
            }),
            inFlight: this.deadLetterQueue.metricApproximateNumberOfMessagesNotVisible({
              period: oneMinute,
              statistic: 'Maximum',
            }),
          },
          label: 'DLQ arrivals per minute',
          period: oneMinute,
        }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      ageOfOldestMessage: new cloudwatch.Alarm(this, 'AgeOfOldestMessageAlarm', {
        alarmDescription: `${q}: the oldest message has waited more than ${ageThreshold.toHumanString()}. The worker is not keeping up, is failing, throttled or disabled.`,
        metric: this.queue.metricApproximateAgeOfOldestMessage({ period: oneMinute, statistic: 'Maximum' }),
        threshold: ageThreshold.toSeconds(),
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      functionErrors: new cloudwatch.Alarm(this, 'WorkerErrorsAlarm', {
        alarmDescription: `${q}: the worker function failed an invocation (crash, timeout or out of memory), so a whole batch returned to the queue. Job failures inside a batch do not count here.`,
        metric: this.worker.metricErrors({ period: fiveMinutes, statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      functionThrottles: new cloudwatch.Alarm(this, 'WorkerThrottlesAlarm', {
        alarmDescription: `${q}: invocations of the worker were throttled (reserved or account concurrency exhausted). Throttled messages return with a raised receive count.`,
        metric: this.worker.metricThrottles({ period: fiveMinutes, statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      jobsDeadLettered: new cloudwatch.Alarm(this, 'JobsDeadLetteredAlarm', {
        alarmDescription: `${q}: the worker sent at least one job to the dead-letter queue (permanent error, attempts used up, or an expired lease under the dead-letter policy).`,
        metric: this.metricJobs('JobDeadLettered', { period: oneMinute, statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      batchesFailed: new cloudwatch.Alarm(this, 'BatchesFailedAlarm', {
        alarmDescription: `${q}: the worker failed a whole batch outside any record (a configuration error such as a missing environment variable, a bug, an early timeout) and reported every record failed. Lambda's Errors does not count this; nothing runs until it is fixed.`,
        metric: this.metricJobs('BatchFailed', { period: oneMinute, statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      batchesOverdue: new cloudwatch.Alarm(this, 'JobBatchesOverdueAlarm', {
        alarmDescription: `${q}: a batch of jobs (ctx.startBatch / JobClient.startBatch) whose completion job runs on this queue is still open past its openLimitSeconds: a child dead-lettered and waiting for its redrive, or a child lost. The worker's WARN log 'batch overdue' names the children not counted.`,
        metric: this.metricJobs('BatchOverdue', { period: fiveMinutes, statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    };
  }
}

/**
 * A FIFO queue name: unique per construct path, at most 80 characters, ending in `.fifo`.
 * CloudFormation's generated FIFO names can exceed the 80-character limit with long stack names
 * (cloudformation-coverage-roadmap issue 280), so FIFO queues are named here.
 */
function fifoQueueName(scope: Construct, suffix: string): string {
  const base = Names.uniqueResourceName(scope, {
    maxLength: 80 - suffix.length - '-.fifo'.length,
    separator: '-',
  });
  return `${base}-${suffix}.fifo`;
}

/**
 * The hash of the function's code asset: the S3 object key without `.zip`. Falls back to the
 * stack's name when the key is not a literal (e.g. a custom synthesizer).
 */
function codeAssetHash(fn: lambda.CfnFunction): string {
  const code = fn.code as lambda.CfnFunction.CodeProperty;
  const key = code.s3Key;
  if (typeof key === 'string' && !Token.isUnresolved(key)) return key.replace(/\.zip$/, '');
  return `unknown-${Stack.of(fn).stackName}`;
}
