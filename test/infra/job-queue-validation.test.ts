/**
 * Synth-time safety checks of JobQueue: one test per rule, each proving that building the app
 * is refused with a {@link JobsConfigError} whose message names the setting, and that all
 * problems of one queue come together in one error. The checks run before the worker is
 * bundled, so these tests synthesize nothing.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotations, App, Duration, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { JobsConfigError } from '../../lib/constructs/errors.ts';
import { JOB_QUEUE_WARNINGS, JobQueue, type JobQueueProps } from '../../lib/constructs/job-queue.ts';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const BASE: JobQueueProps = {
  name: 'jobs',
  entry: 'test/fixtures/worker-handler.ts',
  projectRoot: PROJECT_ROOT,
  maxAttempts: 5,
  jobTimeoutSeconds: 10,
  idempotencyTable: false,
  alarmTopic: false,
};

/** Builds a JobQueue with `overrides` (and optional extra constructs) and returns the error it throws. */
function refusal(
  overrides: Partial<JobQueueProps>,
  extra?: (stack: Stack) => Partial<JobQueueProps>,
): JobsConfigError {
  const stack = new Stack(new App(), 'ValidationTest');
  const more = extra?.(stack) ?? {};
  try {
    new JobQueue(stack, 'Queue', { ...BASE, ...overrides, ...more });
  } catch (e) {
    if (e instanceof JobsConfigError) return e;
    throw e;
  }
  throw new Error('JobQueue accepted settings it should refuse');
}

/** Asserts exactly one problem, about `setting`, matching `detail`; and that the message carries it. */
function expectOneProblem(error: JobsConfigError, setting: string, detail: RegExp): void {
  expect(error.problems).toHaveLength(1);
  expect(error.problems[0]).toMatch(new RegExp(`^${setting}: `));
  expect(error.problems[0]).toMatch(detail);
  expect(error.message).toContain(error.problems[0]);
  expect(error.message).toContain(' at ValidationTest/Queue has 1 unsafe setting:');
}

describe('JobQueue refuses unsafe settings at synth', () => {
  it('a standard dead-letter queue for a FIFO queue', () => {
    const e = refusal({ fifo: true }, (stack) => ({ deadLetterQueue: new sqs.Queue(stack, 'StandardDlq') }));
    expectOneProblem(e, 'deadLetterQueue', /FIFO queue needs a FIFO dead-letter queue/);
  });

  it('a standard queue kept as long as its DLQ (14 days), or a given DLQ kept no longer than the queue', () => {
    expectOneProblem(
      refusal({ retentionPeriod: Duration.days(14) }),
      'retentionPeriod',
      /not shorter than the dead-letter queue's 14 days: a message SQS moves to the DLQ keeps its first enqueue time/,
    );
    expectOneProblem(
      refusal({}, (stack) => ({ deadLetterQueue: new sqs.Queue(stack, 'ShortDlq') })),
      'deadLetterQueue',
      /keeps messages 4 days \(the SQS default\), not longer than this queue's retentionPeriod of 4 days/,
    );
  });

  it('a FIFO dead-letter queue for a standard queue', () => {
    const e = refusal({}, (stack) => ({ deadLetterQueue: new sqs.Queue(stack, 'FifoDlq', { fifo: true }) }));
    expectOneProblem(e, 'deadLetterQueue', /standard queue needs a standard dead-letter queue/);
  });

  it('maxConcurrency below 2', () => {
    expectOneProblem(refusal({ maxConcurrency: 1 }), 'maxConcurrency', /outside 2–1000/);
  });

  it('maxConcurrency above 1000', () => {
    expectOneProblem(refusal({ maxConcurrency: 1001 }), 'maxConcurrency', /outside 2–1000/);
  });

  it('maxConcurrency above the reserved concurrency', () => {
    expectOneProblem(
      refusal({ maxConcurrency: 20, reservedConcurrency: 10 }),
      'maxConcurrency',
      /above reservedConcurrency \(10\).*throttled/,
    );
  });

  it('batchSize over 10 on a FIFO queue', () => {
    expectOneProblem(
      refusal({ fifo: true, batchSize: 11 }),
      'batchSize',
      /above 10, the maximum for a FIFO queue/,
    );
  });

  it('batchSize over 10,000 on a standard queue', () => {
    expectOneProblem(
      refusal({ batchSize: 10_001, maxBatchingWindow: Duration.seconds(5) }),
      'batchSize',
      /above 10000, the maximum for a standard queue/,
    );
  });

  it('batchSize over 10 on a standard queue without a batching window of at least 1 s', () => {
    expectOneProblem(
      refusal({ batchSize: 50 }),
      'batchSize',
      /needs a maxBatchingWindow of at least 1 second/,
    );
    expect(refusal({ batchSize: 50, maxBatchingWindow: Duration.millis(500) }).problems).toEqual([
      'maxBatchingWindow: 0.5 s must be a whole number of seconds (CloudFormation takes seconds)',
      expect.stringMatching(/^batchSize: .*needs a maxBatchingWindow of at least 1 second/),
    ]);
  });

  it('a batching window on a FIFO queue', () => {
    expectOneProblem(
      refusal({ fifo: true, maxBatchingWindow: Duration.seconds(1) }),
      'maxBatchingWindow',
      /FIFO queues do not support a batching window/,
    );
  });

  it('a batching window above 5 minutes', () => {
    expectOneProblem(
      refusal({ maxBatchingWindow: Duration.seconds(301) }),
      'maxBatchingWindow',
      /above 300 s/,
    );
  });

  it('a visibility timeout below 6 × the function timeout', () => {
    expectOneProblem(
      refusal({ functionTimeout: Duration.seconds(30), visibilityTimeout: Duration.seconds(179) }),
      'visibilityTimeout',
      /179 s is below 180 s \(6 × functionTimeout 30 s\)/,
    );
  });

  it('a visibility timeout below 6 × the function timeout plus the batching window', () => {
    expectOneProblem(
      refusal({
        functionTimeout: Duration.seconds(30),
        maxBatchingWindow: Duration.seconds(10),
        visibilityTimeout: Duration.seconds(185),
      }),
      'visibilityTimeout',
      /below 190 s .*maxBatchingWindow 10 s/,
    );
  });

  it('a visibility timeout above 12 hours', () => {
    expectOneProblem(
      refusal({ visibilityTimeout: Duration.hours(13) }),
      'visibilityTimeout',
      /above 43200 s/,
    );
  });

  it('maxReceiveCount equal to maxAttempts', () => {
    expectOneProblem(refusal({ maxReceiveCount: 5 }), 'maxReceiveCount', /above maxAttempts \(5\)/);
  });

  it('maxReceiveCount below maxAttempts', () => {
    expectOneProblem(
      refusal({ maxAttempts: 8, maxReceiveCount: 6 }),
      'maxReceiveCount',
      /above maxAttempts \(8\)/,
    );
  });

  it('a job time limit equal to the function timeout', () => {
    expectOneProblem(
      refusal({ jobTimeoutSeconds: 30, functionTimeout: Duration.seconds(30) }),
      'jobTimeoutSeconds',
      /must be below functionTimeout \(30 s\)/,
    );
  });

  it('a job time limit above the function timeout', () => {
    expectOneProblem(
      refusal({ jobTimeoutSeconds: 45, functionTimeout: Duration.seconds(30) }),
      'jobTimeoutSeconds',
      /45 s must be below functionTimeout \(30 s\)/,
    );
  });

  it('a message size outside 1 KiB – 1 MiB', () => {
    expectOneProblem(
      refusal({ maxMessageSizeBytes: 2_000_000 }),
      'maxMessageSizeBytes',
      /outside 1024–1048576/,
    );
  });

  it('high-throughput settings on a standard queue, or an inconsistent pair on FIFO', () => {
    const standard = refusal({
      deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP,
      fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
    });
    expect(standard.problems.map((p) => p.split(':')[0])).toEqual([
      'deduplicationScope',
      'fifoThroughputLimit',
    ]);
    expectOneProblem(
      refusal({ fifo: true, fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID }),
      'fifoThroughputLimit',
      /requires deduplicationScope messageGroup/,
    );
  });

  it('a malformed logical name or enqueue target name', () => {
    expectOneProblem(refusal({ name: '9 lives' }), 'name', /must start with a lowercase letter/);
    // Upper case or '_' would not survive JOBS_QUEUE_URL_<NAME> → name (JobClient's mapping).
    expectOneProblem(refusal({ name: 'Booking_v2' }), 'name', /lowercase letters, digits and '-'/);
    const e = refusal({}, (stack) => ({ enqueueTargets: { 'bad name': new sqs.Queue(stack, 'T') } }));
    expectOneProblem(e, 'enqueueTargets', /'bad name' is not a valid logical queue name/);
  });

  it('collects every problem of a queue into one error message', () => {
    const e = refusal({
      fifo: true,
      batchSize: 20,
      maxBatchingWindow: Duration.seconds(2),
      maxConcurrency: 5000,
      maxReceiveCount: 3,
      jobTimeoutSeconds: 40,
      functionTimeout: Duration.seconds(30),
      visibilityTimeout: Duration.seconds(60),
    });
    const settings = e.problems.map((p) => p.split(':')[0]);
    expect(settings).toEqual([
      'maxReceiveCount',
      'jobTimeoutSeconds',
      'batchSize',
      'maxBatchingWindow',
      'maxConcurrency',
      'visibilityTimeout',
    ]);
    expect(e.message).toMatch(/has 6 unsafe settings:/);
    for (const p of e.problems) expect(e.message).toContain(`  - ${p}`);
    expect(e.name).toBe('JobsConfigError');
  });

  it('an enqueue target added twice', () => {
    const stack = new Stack(new App(), 'ValidationTest');
    const q = new JobQueue(stack, 'Queue', BASE);
    q.addEnqueueTarget('jobs', q.queue);
    expect(() => q.addEnqueueTarget('jobs', q.queue)).toThrow(
      /enqueueTargets: 'jobs' is already an enqueue target/,
    );
  });
});

describe('JobQueue accepts the limits themselves', () => {
  it('batchSize 11 on standard with a 1 s window, maxConcurrency = reservedConcurrency, visibility exactly 6 ×', () => {
    const stack = new Stack(new App(), 'LimitsTest');
    const q = new JobQueue(stack, 'Queue', {
      ...BASE,
      batchSize: 11,
      maxBatchingWindow: Duration.seconds(1),
      maxConcurrency: 10,
      reservedConcurrency: 10,
      functionTimeout: Duration.seconds(20),
      jobTimeoutSeconds: 19,
      visibilityTimeout: Duration.seconds(121),
      maxReceiveCount: 6,
    });
    expect(q.visibilityTimeout.toSeconds()).toBe(121);
    expect(q.maxReceiveCount).toBe(6);
  });

  it('warns (does not refuse) when maxReceiveCount is below 5', () => {
    const app = new App();
    const stack = new Stack(app, 'WarnTest');
    new JobQueue(stack, 'Queue', { ...BASE, maxAttempts: 2, maxReceiveCount: 3 });
    const warnings = app
      .synth()
      .getStackArtifact(stack.artifactId)
      .messages.filter((m) => m.level === 'warning')
      .map((m) => String(m.entry.data));
    expect(warnings.some((w) => w.includes('maxReceiveCount 3 is below 5'))).toBe(true);
  });
});

describe('JobQueue refuses what JavaScript callers and copy-paste get wrong, one line each', () => {
  /** An app that skips bundling: these tests need the construct tree, not the worker's code. */
  const unbundledStack = () =>
    new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'ValidationTest');

  function refusalOf(build: (stack: Stack) => void): JobsConfigError {
    const stack = unbundledStack();
    try {
      build(stack);
    } catch (e) {
      if (e instanceof JobsConfigError) return e;
      throw e;
    }
    throw new Error('JobQueue accepted settings it should refuse');
  }

  it('no props at all: one line per required prop, nothing derived (no NaN), no NodejsFunction error', () => {
    for (const given of [{}, undefined]) {
      const e = refusalOf((stack) => new JobQueue(stack, 'Queue', given as never));
      expect(e.problems.map((p) => p.split(':')[0])).toEqual([
        'name',
        'entry',
        'maxAttempts',
        'jobTimeoutSeconds',
        'idempotencyTable',
      ]);
      expect(e.message).toMatch(/^JobQueue at ValidationTest\/Queue has 5 unsafe settings:/);
      expect(e.message).not.toMatch(/NaN|Cannot find|Worker\.ts/);
    }
  });

  it('a missing entry is one line, not "Cannot find handler file …/job-queue.Worker.ts"', () => {
    const e = refusalOf((stack) => new JobQueue(stack, 'Queue', { ...BASE, entry: undefined as never }));
    expect(e.problems).toEqual([
      "entry: required: the path of the worker's entry file, e.g. 'functions/payments.ts'",
    ]);
  });

  it('an entry that does not exist, or a handler it does not export, is one line', () => {
    expectOneProblem(
      refusal({ entry: 'functions/missing.ts' }),
      'entry',
      /missing\.ts does not exist \(resolved against projectRoot\)/,
    );
    expectOneProblem(refusal({ handler: 'main' }), 'handler', /worker-handler\.ts does not export 'main'/);
  });

  it('no idempotency table without an explicit opt-out', () => {
    expectOneProblem(refusal({ idempotencyTable: undefined as never }), 'idempotencyTable', /required/);
  });

  it('two JobQueues with one name in a stack: the second is refused, naming the first', () => {
    const e = refusalOf((stack) => {
      new JobQueue(stack, 'Payments', { ...BASE, name: 'payments' });
      new JobQueue(stack, 'PaymentsAgain', { ...BASE, name: 'payments' });
    });
    expect(e.problems).toEqual([
      "name: 'payments' is already the name of the JobQueue at ValidationTest/Payments in this stack: their alarms, Queue metric dimension and dashboard widgets would mix; give each queue its own name",
    ]);
    // The same name in another stack is another queue.
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    new JobQueue(new Stack(app, 'A'), 'Payments', { ...BASE, name: 'payments' });
    expect(() => new JobQueue(new Stack(app, 'B'), 'Payments', { ...BASE, name: 'payments' })).not.toThrow();
  });

  it('derives maxAttempts and jobTimeoutSeconds from jobs, and refuses explicit values below them', () => {
    const jobs = [
      { type: 'jobs.a', queue: 'jobs', retry: { maxAttempts: 7 }, timeoutSeconds: 12 },
      { type: 'jobs.b', queue: 'jobs', retry: { maxAttempts: 3 }, timeoutSeconds: 20 },
    ];
    const stack = unbundledStack();
    const q = new JobQueue(stack, 'Queue', {
      ...BASE,
      maxAttempts: undefined,
      jobTimeoutSeconds: undefined,
      jobs,
    });
    expect([q.maxAttempts, q.jobTimeoutSeconds, q.maxReceiveCount]).toEqual([7, 20, 12]);
    expect(q.functionTimeout.toSeconds()).toBe(60);
    const e = refusal({ jobs, maxAttempts: 5, jobTimeoutSeconds: 10 });
    expect(e.problems.map((p) => p.split(':')[0])).toEqual(['maxAttempts', 'jobTimeoutSeconds']);
  });

  it('no alarm topic: a warning annotation on the queue, none with alarmTopic: false', () => {
    const stack = unbundledStack();
    const warned = new JobQueue(stack, 'Warned', { ...BASE, name: 'warned', alarmTopic: undefined });
    const quiet = new JobQueue(stack, 'Quiet', { ...BASE, name: 'quiet' });
    const warnings = (c: JobQueue) =>
      c.node.metadata.filter((m) => m.type === 'aws:cdk:warning').map((m) => String(m.data));
    expect(warnings(warned)).toEqual([
      expect.stringMatching(
        /^alarmTopic: not set: the alarms of this queue notify nobody.*\[ack: sqs-jobs:noAlarmTopic\]$/,
      ),
    ]);
    expect(warnings(quiet)).toEqual([]);
  });

  it('a queue that enqueues to itself with the default recursive loop detection: a warning naming the 16-hop stop', () => {
    const stack = unbundledStack();
    const warnings = (c: JobQueue) =>
      c.node.metadata.filter((m) => m.type === 'aws:cdk:warning').map((m) => String(m.data));
    const chained = new JobQueue(stack, 'Chained', { ...BASE, name: 'chained' });
    chained.addEnqueueTarget('chained', chained.queue);
    expect(warnings(chained)).toEqual([
      expect.stringMatching(
        /^recursiveLoop: this queue is its own enqueue target \('chained'\) and the worker keeps Lambda's default \(Terminate\): .*about 16 .*\[ack: sqs-jobs:selfEnqueueRecursiveLoop\]$/,
      ),
    ]);
    expect((chained.worker.node.defaultChild as lambda.CfnFunction).recursiveLoop).toBeUndefined();

    // Chosen explicitly, either way: no warning, and the function carries the setting.
    for (const [name, setting, cfn] of [
      ['allowed', lambda.RecursiveLoop.ALLOW, 'Allow'],
      ['terminated', lambda.RecursiveLoop.TERMINATE, 'Terminate'],
    ] as const) {
      const q = new JobQueue(stack, name, { ...BASE, name, recursiveLoop: setting });
      q.addEnqueueTarget(name, q.queue);
      expect(warnings(q)).toEqual([]);
      expect((q.worker.node.defaultChild as lambda.CfnFunction).recursiveLoop).toBe(cfn);
    }

    // Enqueueing to another queue is no loop of this function.
    const other = new JobQueue(stack, 'Other', { ...BASE, name: 'other' });
    other.addEnqueueTarget('chained', chained.queue);
    expect(warnings(other)).toEqual([]);
  });

  it('the noAlarmTopic warning can be acknowledged on a scope above the queue, the CDK way', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const stack = new Stack(app, 'Acknowledged');
    new JobQueue(stack, 'Queue', { ...BASE, alarmTopic: undefined });
    Annotations.of(stack).acknowledgeWarning(
      JOB_QUEUE_WARNINGS.noAlarmTopic,
      'alarms are watched by a composite alarm',
    );
    const warned = app
      .synth()
      .getStackArtifact(stack.artifactId)
      .messages.filter((m) => m.level === 'warning');
    expect(warned).toEqual([]);
  });
});

describe('JobQueue refuses settings AWS would refuse or that could never work, at synth', () => {
  it('a memory size outside 128–10,240 MB or not whole: one line, the AWS page cited', () => {
    expectOneProblem(
      refusal({ memorySizeMb: 20_000 }),
      'memorySizeMb',
      /20000 must be a whole number of MB from 128 to 10,240.*\[configuration-memory\]/,
    );
    expectOneProblem(refusal({ memorySizeMb: 1000.5 }), 'memorySizeMb', /1000\.5 must be a whole number/);
  });

  it('environment variables the construct sets: each named with what to set instead', () => {
    const e = refusal({ environment: { JOBS_QUEUE_URL: 'x', POWERTOOLS_SERVICE_NAME: 'y' } });
    expect(e.problems).toEqual([
      "environment: JOBS_QUEUE_URL is set by the construct and cannot be overridden; it is this queue's URL",
      'environment: POWERTOOLS_SERVICE_NAME is set by the construct and cannot be overridden; it is `sqs-jobs-<name>`: choose the `name` prop',
    ]);
    expect(e.message).toContain(' at ValidationTest/Queue has 2 unsafe settings:');
  });

  it('an age-of-oldest-message alarm threshold of 0, which fires whenever the queue holds a message', () => {
    expectOneProblem(
      refusal({ ageOfOldestMessageAlarmThreshold: Duration.seconds(0) }),
      'ageOfOldestMessageAlarmThreshold',
      /0 s must be a whole number of seconds, at least 1: .*fires whenever the queue holds any message/,
    );
  });
});

describe('JobQueue names the duration prop CDK would not name', () => {
  it('a fraction of a second: refused as the prop, not as CDK\'s "cannot be converted" error', () => {
    expectOneProblem(
      refusal({ maxBatchingWindow: Duration.millis(1500), batchSize: 10 }),
      'maxBatchingWindow',
      /1\.5 s must be a whole number of seconds/,
    );
  });
});
