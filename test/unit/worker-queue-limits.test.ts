/**
 * The worker's jobs against what its queue was built for (docs/contracts.md, "Environment"):
 * JobQueue sets JOBS_MAX_ATTEMPTS and JOBS_JOB_TIMEOUT_SECONDS; a worker whose jobs need more
 * attempts or time refuses to run as a configuration error (every record failed, nothing run,
 * BatchFailed counted), naming the job and the fix. Unset variables check nothing.
 */
import { Metrics } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { queueLimitProblems, readWorkerConfig, WORKER_ENV } from '../../lib/runtime/config.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { FakeSqs } from '../factories/fake-sqs.ts';
import { jobBody, lambdaContext, queueUrl, sqsEvent, sqsRecord } from '../factories/sqs.ts';
import { captureOutput, failedIds } from '../factories/worker.ts';

const schema = z.object({ id: z.string() });
let runs: string[] = [];
const capture = defineJob({
  type: 'payments.capture',
  queue: 'payments',
  schema,
  retry: { maxAttempts: 8 },
  timeoutSeconds: 30,
  run: async () => void runs.push('capture'),
});
// The finding: added to the worker's entry only, not to the JobQueue's jobs.
const refund = defineJob({
  type: 'payments.refund',
  queue: 'payments',
  schema,
  retry: { maxAttempts: 20 },
  timeoutSeconds: 120,
  run: async () => void runs.push('refund'),
});

const baseEnv = {
  JOBS_QUEUE_NAME: 'payments',
  JOBS_QUEUE_URL: queueUrl('payments'),
  JOBS_DLQ_URL: queueUrl('payments-dlq'),
};
/** What JobQueue sets for a queue built for `capture` alone. */
const builtForCapture = { ...baseEnv, JOBS_MAX_ATTEMPTS: '8', JOBS_JOB_TIMEOUT_SECONDS: '30' };

function worker(jobs: (typeof capture)[], env: Record<string, string>) {
  const metrics = new Metrics({
    namespace: 'SqsJobs',
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  metrics.clearDefaultDimensions();
  return createWorker({ jobs, idempotency: false, env, sqs: new FakeSqs(), metrics });
}

async function invoke(handler: ReturnType<typeof createWorker>) {
  const recs = [
    sqsRecord({ body: jobBody('payments.capture', { id: '1' }) }),
    sqsRecord({ body: jobBody('payments.refund', { id: '2' }) }),
  ];
  const { value, lines } = await captureOutput(() => handler(sqsEvent(recs), lambdaContext()));
  return { response: value, lines, recs };
}

describe('a worker running a job its queue was not built for', () => {
  it('refuses to run (every record failed, nothing run, BatchFailed), naming the job, both limits and the fix', async () => {
    runs = [];
    const handler = worker([capture, refund], builtForCapture);
    for (let invocation = 0; invocation < 2; invocation++) {
      const { response, lines, recs } = await invoke(handler);
      expect(failedIds(response)).toEqual(recs.map((r) => r.messageId));
      expect(runs).toEqual([]);
      const error = lines.find((l) => l.level === 'ERROR' && l.outcome === 'batch-failed');
      const text = JSON.stringify(error);
      expect(text).toContain('WorkerConfigError');
      expect(text).toContain(
        'job payments.refund has retry.maxAttempts 20 but queue payments was built for 8 (JOBS_MAX_ATTEMPTS',
      );
      expect(text).toContain(
        'job payments.refund has timeoutSeconds 120 but queue payments was built for a job time limit of 30 s (JOBS_JOB_TIMEOUT_SECONDS',
      );
      expect(text).toContain("add it to the JobQueue's jobs");
      expect(text).not.toContain('job payments.capture has');
      expect(lines.filter((l) => '_aws' in l && l.BatchFailed === 1)).toHaveLength(1);
    }
  });

  it('refuses each limit on its own', () => {
    const limits = { maxAttempts: 8, jobTimeoutSeconds: 30, groupParking: undefined };
    expect(
      queueLimitProblems([{ type: 'a', retry: { maxAttempts: 9 }, timeoutSeconds: 30 }], limits, 'q'),
    ).toEqual([expect.stringMatching(/^job a has retry\.maxAttempts 9 but queue q was built for 8 /)]);
    expect(
      queueLimitProblems([{ type: 'b', retry: { maxAttempts: 8 }, timeoutSeconds: 30.5 }], limits, 'q'),
    ).toEqual([
      expect.stringMatching(
        /^job b has timeoutSeconds 30\.5 but queue q was built for a job time limit of 30 s /,
      ),
    ]);
  });
});

describe('a worker whose jobs fit its queue', () => {
  it('runs them: limits equal to what the jobs need, or above', async () => {
    for (const env of [
      builtForCapture,
      { ...baseEnv, JOBS_MAX_ATTEMPTS: '20', JOBS_JOB_TIMEOUT_SECONDS: '120' },
      { ...baseEnv, JOBS_MAX_ATTEMPTS: '25', JOBS_JOB_TIMEOUT_SECONDS: '300' },
    ]) {
      runs = [];
      const jobs = env === builtForCapture ? [capture] : [capture, refund];
      const { response } = await invoke(worker(jobs, env));
      // Without refund in the worker its record is an unknown type (dead-lettered), not a batch failure.
      expect(failedIds(response)).toEqual([]);
      expect(runs).toEqual(env === builtForCapture ? ['capture'] : ['capture', 'refund']);
    }
  });
});

describe('without the variables (older stacks, tests, other deployers)', () => {
  it('checks nothing', async () => {
    runs = [];
    const { response } = await invoke(worker([capture, refund], baseEnv));
    expect(failedIds(response)).toEqual([]);
    expect(runs).toEqual(['capture', 'refund']);
    const config = readWorkerConfig({}, baseEnv);
    expect(config.ok && config.config.queueLimits).toEqual({
      maxAttempts: undefined,
      jobTimeoutSeconds: undefined,
    });
  });

  it('checks the one that is set', async () => {
    runs = [];
    const { response, lines } = await invoke(
      worker([capture, refund], { ...baseEnv, JOBS_JOB_TIMEOUT_SECONDS: '60' }),
    );
    expect(failedIds(response)).toHaveLength(2);
    const text = JSON.stringify(lines.find((l) => l.outcome === 'batch-failed'));
    expect(text).toContain('timeoutSeconds 120');
    expect(text).not.toContain('retry.maxAttempts');
  });
});

describe('reading JOBS_MAX_ATTEMPTS and JOBS_JOB_TIMEOUT_SECONDS', () => {
  it('are part of the environment contract', () => {
    expect(WORKER_ENV.maxAttempts).toBe('JOBS_MAX_ATTEMPTS');
    expect(WORKER_ENV.jobTimeoutSeconds).toBe('JOBS_JOB_TIMEOUT_SECONDS');
    const config = readWorkerConfig(
      {},
      { ...baseEnv, JOBS_MAX_ATTEMPTS: '8', JOBS_JOB_TIMEOUT_SECONDS: '2.5' },
    );
    expect(config.ok && config.config.queueLimits).toEqual({ maxAttempts: 8, jobTimeoutSeconds: 2.5 });
  });

  it.each([
    ['JOBS_MAX_ATTEMPTS', 'eight'],
    ['JOBS_MAX_ATTEMPTS', '2.5'],
    ['JOBS_MAX_ATTEMPTS', '0'],
    ['JOBS_JOB_TIMEOUT_SECONDS', '-1'],
    ['JOBS_JOB_TIMEOUT_SECONDS', 'Infinity'],
  ])('refuses %s=%s as a configuration error', async (name, value) => {
    const config = readWorkerConfig({}, { ...baseEnv, [name]: value });
    expect(config.ok).toBe(false);
    expect(!config.ok && config.problems.join()).toContain(`env ${name} must be`);
    runs = [];
    const { response } = await invoke(worker([capture], { ...baseEnv, [name]: value }));
    expect(failedIds(response)).toHaveLength(2);
    expect(runs).toEqual([]);
  });

  it('reads an empty value as unset', () => {
    const config = readWorkerConfig({}, { ...baseEnv, JOBS_MAX_ATTEMPTS: ' ', JOBS_JOB_TIMEOUT_SECONDS: '' });
    expect(config.ok && config.config.queueLimits).toEqual({
      maxAttempts: undefined,
      jobTimeoutSeconds: undefined,
    });
  });
});
