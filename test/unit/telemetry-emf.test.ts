import { Metrics } from '@aws-lambda-powertools/metrics';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { PermanentError } from '../../lib/core/errors.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import {
  BatchMetrics,
  DirectEmf,
  type JobMetricName,
  publishBatchFailed,
} from '../../lib/runtime/telemetry.ts';
import { jobBody, sqsRecord } from '../factories/sqs.ts';
import { captureOutput, type OutputLine, workerHarness } from '../factories/worker.ts';

/** The same values, in the same order, into a fresh BatchMetrics. */
function collected(): BatchMetrics {
  const batch = new BatchMetrics();
  const adds: [string, JobMetricName, number?][] = [
    ['orders.capture', 'JobCompleted'],
    ['orders.capture', 'JobDuration', 12],
    ['orders.capture', 'JobCompleted'],
    ['orders.capture', 'JobDuration', 3],
    ['orders.capture', 'JobRetried'],
    ['unknown', 'JobDeadLettered'],
    ['orders.notify', 'JobCompleted'],
    ['orders.notify', 'JobDuration', 7],
  ];
  for (const [type, name, value] of adds) batch.add(type, name, value);
  batch.addFailure('orders.capture', {
    jobId: 'job-7',
    outcome: 'retry',
    rootJobId: 'root-1',
    parentJobId: 'parent-1',
    correlationId: 'order-42',
    traceId: '0af7651916cd43dd8448eb211c80319c',
  });
  batch.addFailure('unknown', { jobId: 'job-8', outcome: 'dead-lettered' });
  // 12 failures of one type: 10 listed, 2 counted.
  for (let i = 0; i < 12; i++) batch.addFailure('orders.bulk', { jobId: `bulk-${i}`, outcome: 'retry' });
  // 120 durations of one type: three blobs of at most 50 values.
  for (let i = 0; i < 120; i++) batch.add('orders.bulk', i === 0 ? 'JobCompleted' : 'JobDuration', i);
  return batch;
}

const withoutTimestamp = (blob: OutputLine) => {
  const aws = blob._aws as { Timestamp?: number };
  expect(typeof aws.Timestamp).toBe('number');
  return { ...blob, _aws: { ...aws, Timestamp: 0 } };
};

describe('the worker’s own EMF writer (DirectEmf)', () => {
  it('writes the same blobs as Powertools Metrics, in the same order', async () => {
    const metrics = new Metrics({ namespace: 'SqsJobs' });
    metrics.clearDefaultDimensions();
    const { lines: viaPowertools } = await captureOutput(async () => collected().flush(metrics, 'jobs'));
    const direct: string[] = [];
    collected().flush(new DirectEmf({}, (line) => direct.push(line)), 'jobs');
    expect(direct.every((line) => line.endsWith('\n'))).toBe(true);
    const viaDirect = direct.map((line) => JSON.parse(line) as OutputLine);
    expect(viaPowertools).toHaveLength(6);
    // The failures' lineage is metadata of the first blob of their job type, never a dimension.
    const capture = viaPowertools.find((b) => b.JobType === 'orders.capture');
    expect(capture?.failedJobs).toEqual([
      {
        jobId: 'job-7',
        outcome: 'retry',
        rootJobId: 'root-1',
        parentJobId: 'parent-1',
        correlationId: 'order-42',
        traceId: '0af7651916cd43dd8448eb211c80319c',
      },
    ]);
    const bulk = viaPowertools.filter((b) => b.JobType === 'orders.bulk');
    expect(bulk.map((b) => (b.failedJobs as unknown[] | undefined)?.length)).toEqual([
      10,
      undefined,
      undefined,
    ]);
    expect(bulk[0]?.failedJobsNotListed).toBe(2);
    expect(viaPowertools.find((b) => b.JobType === 'orders.notify')).not.toHaveProperty('failedJobs');
    for (const blob of viaPowertools) {
      const dimensions = (blob._aws as { CloudWatchMetrics: { Dimensions: string[][] }[] })
        .CloudWatchMetrics[0]?.Dimensions;
      expect(dimensions).toEqual([['Queue'], ['Queue', 'JobType']]);
    }
    expect(viaDirect.map(withoutTimestamp)).toEqual(viaPowertools.map(withoutTimestamp));
    // Key order too (what a log reader sees).
    expect(viaDirect.map((blob) => Object.keys(blob))).toEqual(
      viaPowertools.map((blob) => Object.keys(blob)),
    );
  });

  it('writes them byte for byte as Powertools Metrics does (the same clock)', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-12-01T10:20:30.456Z') });
    try {
      const metrics = new Metrics({ namespace: 'SqsJobs' });
      metrics.clearDefaultDimensions();
      const chunks: string[] = [];
      const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
        chunks.push(String(chunk));
        return true;
      });
      try {
        collected().flush(metrics, 'jobs');
        publishBatchFailed(metrics, 'jobs');
      } finally {
        spy.mockRestore();
      }
      const direct: string[] = [];
      const emf = new DirectEmf({}, (line) => direct.push(line));
      collected().flush(emf, 'jobs');
      publishBatchFailed(emf, 'jobs');
      expect(direct).toHaveLength(7);
      expect(direct.join('')).toBe(chunks.join(''));
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes the BatchFailed blob as Powertools Metrics does: dimension set [Queue] alone', async () => {
    const metrics = new Metrics({ namespace: 'SqsJobs' });
    metrics.clearDefaultDimensions();
    const { lines: viaPowertools } = await captureOutput(async () => publishBatchFailed(metrics, 'jobs'));
    const direct: string[] = [];
    publishBatchFailed(new DirectEmf({}, (line) => direct.push(line)), 'jobs');
    const viaDirect = direct.map((line) => JSON.parse(line) as OutputLine);
    expect(viaPowertools).toHaveLength(1);
    expect(viaDirect.map(withoutTimestamp)).toEqual(viaPowertools.map(withoutTimestamp));
    expect(viaDirect.map((blob) => Object.keys(blob))).toEqual(
      viaPowertools.map((blob) => Object.keys(blob)),
    );
  });

  it('takes the namespace from POWERTOOLS_METRICS_NAMESPACE, else SqsJobs', () => {
    expect(new DirectEmf({ POWERTOOLS_METRICS_NAMESPACE: 'Shop' }).namespace).toBe('Shop');
    expect(new DirectEmf({}).namespace).toBe('SqsJobs');
  });

  it('is off as Powertools is: POWERTOOLS_METRICS_DISABLED, else POWERTOOLS_DEV', () => {
    const written: string[] = [];
    const write = (line: string) => written.push(line);
    new BatchMetrics().flush(new DirectEmf({ POWERTOOLS_METRICS_DISABLED: 'true' }, write), 'jobs');
    const batch = () => {
      const b = new BatchMetrics();
      b.add('t', 'JobCompleted');
      return b;
    };
    batch().flush(new DirectEmf({ POWERTOOLS_METRICS_DISABLED: 'true' }, write), 'jobs');
    batch().flush(new DirectEmf({ POWERTOOLS_DEV: 'true' }, write), 'jobs');
    expect(written).toEqual([]);
    batch().flush(
      new DirectEmf({ POWERTOOLS_DEV: 'true', POWERTOOLS_METRICS_DISABLED: 'false' }, write),
      'jobs',
    );
    expect(written).toHaveLength(1);
  });

  it('is what a worker without a given Metrics writes', async () => {
    const job = defineJob({
      type: 'orders.capture',
      queue: 'jobs',
      schema: z.object({ orderId: z.string() }),
      run: async () => 'ok',
    });
    const h = workerHarness({
      jobs: [job],
      metrics: undefined,
      env: { POWERTOOLS_METRICS_NAMESPACE: 'Shop' },
    });
    const { emf } = await h.invoke([sqsRecord({ body: jobBody('orders.capture', { orderId: 'o1' }) })]);
    expect(emf).toEqual([
      {
        _aws: {
          Timestamp: expect.any(Number),
          CloudWatchMetrics: [
            {
              Namespace: 'Shop',
              Dimensions: [['Queue'], ['Queue', 'JobType']],
              Metrics: [
                { Name: 'JobCompleted', Unit: 'Count' },
                { Name: 'JobDuration', Unit: 'Milliseconds' },
              ],
            },
          ],
        },
        Queue: 'jobs',
        JobType: 'orders.capture',
        JobCompleted: 1,
        JobDuration: expect.any(Number),
      },
    ]);
  });
});

describe('EMF metadata of failures', () => {
  it('a dead-lettered job of a chain is listed with its lineage in the blob of its dead letter', async () => {
    const job = defineJob({
      type: 'orders.capture',
      queue: 'jobs',
      schema: z.object({ orderId: z.string() }),
      run: async () => {
        throw new PermanentError('card declined');
      },
    });
    const h = workerHarness({ jobs: [job], metrics: undefined });
    const body = jobBody(
      'orders.capture',
      { orderId: 'o1' },
      {
        id: 'job-1',
        lineage: {
          causationid: 'parent-1',
          rootid: 'root-1',
          correlationid: 'order-42',
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        },
      },
    );
    const { emf } = await h.invoke([sqsRecord({ body })]);
    // The dead letter's own blob, written when it was sent; the batch's blob (its JobDuration) lists it no more.
    const deadLetters = emf.filter((blob) => 'JobDeadLettered' in blob);
    expect(deadLetters).toHaveLength(1);
    expect(emf.filter((blob) => 'failedJobs' in blob)).toEqual(deadLetters);
    expect(deadLetters[0]).toMatchObject({
      failedJobs: [
        {
          jobId: 'job-1',
          outcome: 'dead-lettered',
          parentJobId: 'parent-1',
          rootJobId: 'root-1',
          correlationId: 'order-42',
          traceId: '0af7651916cd43dd8448eb211c80319c',
        },
      ],
      JobDeadLettered: 1,
    });
    expect(Object.keys(deadLetters[0] ?? {}).slice(0, 4)).toEqual(['_aws', 'failedJobs', 'Queue', 'JobType']);
  });
});
