/**
 * What each published entry point pulls in (package.json `exports`): a Lambda worker importing
 * `sqs-jobs` must not bundle the CDK or the CLI, a producer importing `sqs-jobs/client` gets the
 * SQS client only, and every package an entry point reaches is one the package declares, so an
 * install from the registry can run it. And what each one exports, pinned: the public API is what
 * README.md, docs/ and examples/ use plus the types of those signatures, so a name added to an
 * entry point fails here until the list below grows with it (a decision made in review).
 */
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  exports: Record<string, { default?: string } | string>;
  dependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
};

/** The TypeScript source behind each subpath of `exports` (dist/x/index.js ← lib/x/index.ts). */
function sourceOf(subpath: string): string {
  const target = pkg.exports[subpath];
  const js = typeof target === 'string' ? target : target?.default;
  if (js === undefined) throw new Error(`exports["${subpath}"] has no default target`);
  return js.replace(/^\.\/dist\//, 'lib/').replace(/\.js$/, '.ts');
}

interface Reach {
  /** Repository files in the import graph, relative to the root (`lib/runtime/worker.ts`). */
  readonly files: string[];
  /** npm packages imported anywhere in the graph (`@aws-sdk/client-sqs`, `p-limit`). */
  readonly packages: Set<string>;
}

const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string);
}

/** The import graph of an entry point, packages left external (type-only imports are erased, as in any bundle). */
async function reach(entry: string): Promise<Reach> {
  const result = await build({
    entryPoints: [new URL(entry, root).pathname],
    absWorkingDir: new URL('.', root).pathname,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
  });
  const packages = new Set<string>();
  for (const input of Object.values(result.metafile.inputs)) {
    for (const imported of input.imports) {
      if (imported.external && !builtins.has(imported.path)) packages.add(packageName(imported.path));
    }
  }
  return { files: Object.keys(result.metafile.inputs), packages };
}

/**
 * The public API of each entry point. Growing it is a decision: add the name here in the same
 * change, with the doc or example that uses it; everything else stays internal (tests import it
 * by path).
 */
const PUBLIC_API: Record<string, { values: string[]; types: string[] }> = {
  '.': {
    values: [
      'ChildRejectedError',
      'ConcurrencyKeyError',
      'EnvelopeError',
      'GroupParkedError',
      'IdempotencyRecordError',
      'JobDataInvalidError',
      'JobError',
      'JobIdentityError',
      'JobTimeoutError',
      'LeaseExpiredError',
      'LimitStore',
      'LimitStoreError',
      'LimitWait',
      'OrderedJobWithoutGroupError',
      'PayloadMismatchError',
      'PermanentError',
      'RateLimitUsageError',
      'RawMessageError',
      'StepValueNotStoredError',
      'TransientError',
      'UnknownJobTypeError',
      'WorkerConfigError',
      'batchChild',
      'batchCompletion',
      'classifyError',
      'createWorker',
      'defineJob',
      'defineRateLimit',
      'parseRetryAfterMs',
    ],
    types: [
      'AdaptiveRateOptions',
      'BatchChildEntry',
      'BatchChildOutcome',
      'BatchCompletionEntry',
      'BatchContext',
      'BatchDeadLetterPolicy',
      'BeginOutcome',
      'BeginRequest',
      'ConcurrencyOptions',
      'DeadLetterPolicy',
      'EnqueueOptions',
      'ErrorClassification',
      'IdempotencyGuard',
      'JobContext',
      'JobDefinition',
      'JobBatchSpec',
      'JobIdempotencyOptions',
      'JobLineage',
      'JobLogExtra',
      'JobLogger',
      'JobSpec',
      'Lease',
      'LeaseExpiredPolicy',
      'LeaseWrite',
      'LimitStoreOptions',
      'LogWriter',
      'RateLimitDefinition',
      'RateLimitOptions',
      'RateLimitPermit',
      'RateLimitSpec',
      'RawJobIdentity',
      'RawMessageFormat',
      'RawMessageOptions',
      'RetryPolicy',
      'SqsSender',
      'StepValue',
      'TogetherWrite',
      'WorkerHandler',
      'WorkerOptions',
    ],
  },
  './worker': {
    values: [
      'ChildRejectedError',
      'EnvelopeError',
      'GroupParkedError',
      'IdempotencyRecordError',
      'JobDataInvalidError',
      'JobError',
      'JobIdentityError',
      'JobTimeoutError',
      'LeaseExpiredError',
      'MissingFeatureError',
      'OrderedJobWithoutGroupError',
      'PayloadMismatchError',
      'PermanentError',
      'RawMessageError',
      'StepValueNotStoredError',
      'TransientError',
      'UnknownJobTypeError',
      'WorkerConfigError',
      'batches',
      'children',
      'classifyError',
      'createWorker',
      'defineJob',
      'defineRateLimit',
      'groupParking',
      'limits',
      'parseRetryAfterMs',
      'rawMessages',
      'scheduledJobs',
    ],
    types: [
      'DeadLetterPolicy',
      'EnqueueOptions',
      'ErrorClassification',
      'FeatureName',
      'IdempotencyGuard',
      'JobContext',
      'JobDefinition',
      'JobIdempotencyOptions',
      'JobLineage',
      'JobLogExtra',
      'JobLogger',
      'JobSpec',
      'LeaseExpiredPolicy',
      'RateLimitDefinition',
      'RateLimitOptions',
      'RateLimitPermit',
      'RetryPolicy',
      'SqsSender',
      'StepValue',
      'WorkerFeature',
      'WorkerHandler',
      'WorkerOptions',
    ],
  },
  './client': {
    values: [
      'JobClient',
      'JobClientError',
      'JobError',
      'batchChild',
      'batchCompletion',
      'batchEntry',
      'queueUrlsFromEnv',
      'schedulingFromEnv',
    ],
    types: [
      'BatchChildEntry',
      'BatchCompletionEntry',
      'BatchDeadLetterPolicy',
      'BatchEntry',
      'BatchResult',
      'BatchSpec',
      'BatchStarted',
      'CancelResult',
      'CheckedEnvelope',
      'ClientRetryOptions',
      'DynamoDbSender',
      'EntryProblem',
      'FailedEntry',
      'JobClientBatchOptions',
      'JobClientOptions',
      'JobEnvelope',
      'LogWriter',
      'ParentLink',
      'QueueScheduling',
      'RescheduleResult',
      'ScheduledJobIdentity',
      'SchedulerSender',
      'SchedulingOptions',
      'SendEnvelopeOptions',
      'SendOptions',
      'SendResult',
      'SendableJob',
      'SentEntry',
      'SqsBatchSender',
      'WatchdogScheduler',
    ],
  },
  './cdk': {
    values: [
      'AlarmTopic',
      'IdempotencyTable',
      'JobQueue',
      'JobsConfigError',
      'JobsConstructError',
      'JobsDashboard',
      'applyJobsChecks',
      'createJobsApp',
      'jobsAppContext',
      'runJobsApp',
    ],
    types: [
      'AlarmTopicProps',
      'IdempotencyTableProps',
      'JobDefinitionLike',
      'JobQueueAlarms',
      'JobQueueProps',
      'JobQueueScheduleAlarms',
      'JobsAppProps',
      'JobsChecksOptions',
      'JobsDashboardProps',
      'JobsNagOptions',
      'RecurringJob',
      'RunJobsAppOptions',
    ],
  },
  './testing': {
    values: [
      'MemoryIdempotencyStore',
      'MemoryLimitStore',
      'MemorySqs',
      'TEST_ACCOUNT',
      'TEST_REGION',
      'jobBody',
      'jobRecord',
      'lambdaContext',
      'queueArn',
      'queueUrl',
      'runJob',
      'sqsEvent',
      'sqsRecord',
    ],
    types: [
      'CompletedRun',
      'EnqueuedChild',
      'FailRule',
      'FailedRun',
      'JobBodyOptions',
      'JobRecordOptions',
      'JobRunOutcome',
      'LoggedLine',
      'MemoryIdempotencyStoreOptions',
      'MemoryJobRecord',
      'MemoryLimitStoreOptions',
      'RecordInput',
      'RecordedLogLevel',
      'RecordedStep',
      'RunJobOptions',
      'SqsCall',
      'StartedBatch',
      'TakenRateLimit',
      'TestLambdaContext',
    ],
  },
  './ops': {
    values: [
      'DeadLetterReader',
      'OpsError',
      'cloudWatchOldestAges',
      'compileFilter',
      'listQueueUrls',
      'readDeadLetters',
      'readQueueStats',
      'redriveDeadLetters',
      'redriveDeduplicationId',
      'renderJobChain',
      'summarizeDeadLetters',
      'verifyRedrive',
      'walkJobChain',
    ],
    types: [
      'CameBackItem',
      'ChainDeadLetter',
      'ChainDeadLetterQueue',
      'ChainJob',
      'ChainJobState',
      'DeadLetterEvidenceAttributes',
      'DeadLetterFilter',
      'DeadLetterGroup',
      'DeadLetterMessage',
      'DeadLetterQueueStats',
      'DeadLetterRead',
      'DeadLetterReaderOptions',
      'DeadLetterSummary',
      'FailedItem',
      'GroupKey',
      'JobChain',
      'JobIdentity',
      'JobName',
      'MetricDataReader',
      'MetricDataRequest',
      'MetricDataResponse',
      'MovedItem',
      'NotDeletedItem',
      'OldestMessageAge',
      'OldestMessageAgeSource',
      'OpsErrorCode',
      'OpsSqs',
      'QueueInfo',
      'QueueStats',
      'QueueStatsReport',
      'ReadDeadLettersOptions',
      'ReadJobItem',
      'ReadQueueStatsOptions',
      'RedriveItem',
      'RedriveOptions',
      'RedrivePlan',
      'RedriveResult',
      'ReleaseFailure',
      'ReleaseReport',
      'ReturnMatch',
      'SkippedItem',
      'StrandedParked',
      'VerifyRedriveOptions',
      'VerifyRedriveResult',
      'WalkJobChainOptions',
    ],
  },
};

/**
 * The names an index file re-exports, read from its `export { ... } from` lines: `type X`
 * (or a whole `export type { ... }`) is a type, the rest values. tsc checks the index itself.
 */
function declaredExports(file: string): { values: string[]; types: string[] } {
  const source = readFileSync(new URL(file, root), 'utf8');
  const values: string[] = [];
  const types: string[] = [];
  for (const [, typeOnly, names] of source.matchAll(/^export\s+(type\s+)?\{([^}]*)\}\s+from\s/gm)) {
    for (const entry of (names as string)
      .split(',')
      .map((n) => n.trim())
      .filter(Boolean)) {
      const isType = typeOnly !== undefined || entry.startsWith('type ');
      // `x as y` exports `y`.
      (isType ? types : values).push(entry.replace(/^type\s+/, '').replace(/^.*\sas\s+/, ''));
    }
  }
  if (/^export\s+(\*|default|const|function|class|interface|type\s+\w+\s*=)/m.test(source)) {
    throw new Error(
      `${file}: an entry point only re-exports by name (export { ... } from), so this test can read it`,
    );
  }
  return { values: values.sort(), types: types.sort() };
}

describe('the public API of each entry point (growing it is a decision made in review)', () => {
  for (const [subpath, pinned] of Object.entries(PUBLIC_API)) {
    it(`${subpath === '.' ? 'sqs-jobs' : `sqs-jobs/${subpath.slice(2)}`} exports exactly its pinned names`, async () => {
      const file = sourceOf(subpath);
      const loaded = Object.keys(await import(new URL(file, root).href)).sort();
      expect(loaded, `${file}: the values it exports at run time`).toEqual([...pinned.values].sort());
      const declared = declaredExports(file);
      expect(declared.values, `${file}: the values its export lines name`).toEqual([...pinned.values].sort());
      expect(declared.types, `${file}: the types its export lines name`).toEqual([...pinned.types].sort());
    });
  }
});

describe('entry points', () => {
  it('sqs-jobs (the Lambda runtime) reaches neither the CDK, the CLI, the DLQ tools nor the local runtime', async () => {
    const { files, packages } = await reach(sourceOf('.'));
    expect(files).toContain('lib/runtime/worker.ts');
    expect(files.filter((f) => /^lib\/(constructs|stacks|local|ops|sample)\//.test(f))).toEqual([]);
    for (const forbidden of [
      'aws-cdk-lib',
      'constructs',
      'cdk-nag',
      'commander',
      'cli-progress',
      'fauxqs',
      'dynalite',
    ]) {
      expect(packages).not.toContain(forbidden);
    }
    // Powertools Metrics and Logger are types only: the worker writes EMF and its log lines itself
    // (lib/runtime/default-logger.ts) unless given a Metrics or a Logger.
    // Children go through JobSender, not JobClient: a child is never sent for later, so neither
    // the Scheduler client nor croner is in a worker (issue 21: bundle bytes, cold start); a
    // batch's bounded concurrency is lib/runtime/batch.ts's own runners, not p-limit.
    expect([...packages].sort()).toEqual(
      ['@aws-sdk/client-dynamodb', '@aws-sdk/client-sqs', '@middy/core'].sort(),
    );
    // A worker's sends are built by sqs-jobs itself and go now: JobClient's option checks, the
    // producer's entry checks and the runAt/delayMs rules are not in a worker (issue 21: bytes).
    expect(files).toContain('lib/client/job-sender.ts');
    for (const producerOnly of [
      'lib/client/job-client.ts',
      'lib/client/client-options.ts',
      'lib/client/entry-options.ts',
      'lib/client/run-at.ts',
    ]) {
      expect(files).not.toContain(producerOnly);
    }
    // The X-Ray tracer is imported through a name no bundler follows (lib/runtime/tracing.ts), on
    // the first sampled invocation only, so no worker bundle holds it (issue 21); it is still
    // what the runtime loads then, so the package must install it.
    expect(pkg.dependencies).toHaveProperty(['@aws-lambda-powertools/tracer']);
  });

  it('sqs-jobs/worker without features bundles none of their code; each feature brings its own (issue 21: bytes)', async () => {
    /** The repository files with bytes in a tree-shaken bundle of a worker using `features`. */
    const bundled = async (features: string[]): Promise<string[]> => {
      const result = await build({
        stdin: {
          contents: `import { createWorker, defineJob, ${features.join(', ')} } from './lib/worker.ts';
            const job = defineJob({ type: 'a.b', queue: 'a', schema: { '~standard': { version: 1, vendor: 'x', validate: (value) => ({ value }) } }, run: async () => {} });
            export const handler = createWorker({ jobs: [job], features: [${features.join(', ')}] });`,
          resolveDir: new URL('.', root).pathname,
          loader: 'ts',
        },
        absWorkingDir: new URL('.', root).pathname,
        bundle: true,
        write: false,
        metafile: true,
        minify: true,
        platform: 'node',
        format: 'esm',
        packages: 'external',
        logLevel: 'silent',
      });
      return Object.values(result.metafile.outputs).flatMap((output) =>
        Object.entries(output.inputs)
          .filter(([, input]) => input.bytesInOutput > 0)
          .map(([file]) => file),
      );
    };
    const FEATURE_CODE: Record<string, RegExp> = {
      children: /^lib\/client\/|^lib\/runtime\/(child-sender|children)\.ts$/,
      batches: /^lib\/runtime\/batches\/(count|start|watchdog|context)\.ts$/,
      limits:
        /^lib\/runtime\/limits\/(slots|buckets|take)\.ts$|^lib\/runtime\/record\/(limit-wait|concurrency-slot)\.ts$/,
      groupParking: /^lib\/runtime\/group-park\.ts$|^lib\/runtime\/record\/parked-group\.ts$/,
      scheduledJobs: /^lib\/runtime\/record\/scheduled\.ts$/,
      rawMessages: /^lib\/runtime\/record\/raw\.ts$/,
    };
    const bare = await bundled([]);
    expect(bare).toContain('lib/runtime/record/index.ts');
    for (const [name, code] of Object.entries(FEATURE_CODE)) {
      expect(
        bare.filter((f) => code.test(f)),
        `${name}'s code in a worker without it`,
      ).toEqual([]);
    }
    const withBatches = await bundled(['batches']);
    expect(withBatches).toContain('lib/runtime/batches/count.ts');
    expect(withBatches.filter((f) => FEATURE_CODE.limits?.test(f))).toEqual([]);
    const withChildren = await bundled(['children']);
    expect(withChildren).toContain('lib/client/job-sender.ts');
    expect(withChildren.filter((f) => FEATURE_CODE.batches?.test(f))).toEqual([]);
  });

  it('sqs-jobs/client reaches the SQS client, and the Scheduler and DynamoDB clients only when sending for later or starting a batch', async () => {
    const { files, packages } = await reach(sourceOf('./client'));
    expect(files).toContain('lib/client/job-client.ts');
    // lib/client/scheduled-jobs.ts is imported dynamically, on the first job sent for later;
    // DynamoDB also for the batch item of JobClient.startBatch (lib/client/batch-table.ts).
    expect([...packages].sort()).toEqual(
      ['@aws-sdk/client-dynamodb', '@aws-sdk/client-scheduler', '@aws-sdk/client-sqs', 'croner'].sort(),
    );
    expect(
      files.filter((f) => /^lib\/(constructs|local|ops|sample)\//.test(f) || f.endsWith('worker.ts')),
    ).toEqual([]);
  });

  it('sqs-jobs/ops reaches the SQS client only', async () => {
    const { packages, files } = await reach(sourceOf('./ops'));
    expect(files).toContain('lib/ops/redrive/index.ts');
    expect([...packages]).toEqual(['@aws-sdk/client-sqs']);
  });

  it('sqs-jobs/cdk reaches the CDK packages (peers) and no Lambda runtime code', async () => {
    const { files, packages } = await reach(sourceOf('./cdk'));
    expect(files).toContain('lib/constructs/job-queue.ts');
    expect(files.filter((f) => f.startsWith('lib/runtime/'))).toEqual([]);
    // Peers, or a dependency the package installs anyway: croner, through lib/core/schedule-expression.ts
    // (recurring jobs' expressions are checked at synth with the evaluator the runtime uses).
    for (const name of packages)
      expect([...Object.keys(pkg.peerDependencies), 'croner'], name).toContain(name);
    expect(packages).toContain('aws-cdk-lib');
  });

  it('sqs-jobs/testing reaches the runtime and no CDK, CLI, local runtime or emulator', async () => {
    const { files, packages } = await reach(sourceOf('./testing'));
    expect(files).toContain('lib/runtime/idempotency/decide.ts');
    expect(files.filter((f) => /^lib\/(constructs|stacks|local|ops|sample|cli)\//.test(f))).toEqual([]);
    for (const forbidden of ['aws-cdk-lib', 'constructs', 'cdk-nag', 'commander', 'fauxqs', 'dynalite']) {
      expect(packages).not.toContain(forbidden);
    }
  });

  it('every package the runtime, client, ops and testing entry points import is a dependency of the package', async () => {
    const reached = await Promise.all(['.', './client', './ops', './testing'].map((s) => reach(sourceOf(s))));
    const missing = reached.flatMap((r) => [...r.packages]).filter((name) => !(name in pkg.dependencies));
    expect(missing).toEqual([]);
  });
});
