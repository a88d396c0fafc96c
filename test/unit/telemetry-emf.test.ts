import { Metrics } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
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
    expect(viaDirect.map(withoutTimestamp)).toEqual(viaPowertools.map(withoutTimestamp));
    // Key order too (what a log reader sees).
    expect(viaDirect.map((blob) => Object.keys(blob))).toEqual(
      viaPowertools.map((blob) => Object.keys(blob)),
    );
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
