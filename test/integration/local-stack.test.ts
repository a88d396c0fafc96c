/**
 * The local runtime on the real stack: synthesizes (or reuses an up-to-date cdk.out), creates
 * what the JobsStack template declares, and runs the bundled workers that deploy. Checks that
 * the local topology is the one of lib/sample/topology.ts and docs/contracts.md, and that a
 * record the real worker cannot parse ends in its queue's DLQ, through the emulated mapping.
 */
import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../lib/local/runtime.ts';
import { SAMPLE_QUEUES } from '../../lib/sample/topology.ts';

let rt: LocalRuntime;

beforeAll(async () => {
  rt = await startLocalRuntime({
    env: {},
    environment: { EXTERNAL_API_URL: 'http://127.0.0.1:9' },
    receiveWaitTimeSeconds: 2,
  });
});

afterAll(async () => {
  await rt?.stop();
});

describe('the JobsStack template, running locally', () => {
  it('has one worker per sample queue, on a queue of the right kind with a DLQ', async () => {
    expect(rt.workers.map((w) => w.jobQueueName).sort()).toEqual(SAMPLE_QUEUES.map((q) => q.name).sort());
    for (const sample of SAMPLE_QUEUES) {
      const worker = rt.worker(sample.name);
      const queue = rt.queue(sample.name);
      expect(worker.queueUrl).toBe(queue.url);
      expect(queue.fifo).toBe(sample.fifo);
      expect(worker.reportBatchItemFailures).toBe(true);
      const dlq = queue.deadLetterQueue;
      expect(dlq?.maxReceiveCount).toBeGreaterThan(sample.maxAttempts);
      expect(rt.queue(dlq?.url ?? '').fifo).toBe(sample.fifo);
      const attrs = (
        await rt.sqs.send(new GetQueueAttributesCommand({ QueueUrl: queue.url, AttributeNames: ['All'] }))
      ).Attributes;
      expect(Number(attrs?.VisibilityTimeout)).toBeGreaterThanOrEqual(6 * worker.timeoutSeconds);
    }
  });

  it('gives each worker the environment of docs/contracts.md, pointing at local resources', () => {
    const idempotency = rt.tables.find((t) => t.keySchema.length === 1 && t.ttlAttribute === 'expiresAt');
    expect(idempotency).toBeDefined();
    for (const sample of SAMPLE_QUEUES) {
      const { env } = rt.worker(sample.name);
      expect(env.JOBS_QUEUE_URL).toBe(rt.queue(sample.name).url);
      expect(env.JOBS_DLQ_URL).toBe(rt.queue(sample.name).deadLetterQueue?.url);
      expect(env.JOBS_IDEMPOTENCY_TABLE).toBe(idempotency?.name);
      for (const target of sample.enqueuesTo) {
        expect(env[`JOBS_QUEUE_URL_${target.toUpperCase().replace(/-/g, '_')}`]).toBe(rt.queue(target).url);
      }
      expect(env.AWS_ENDPOINT_URL).toBe(rt.endpoints.sqs);
      expect(env.EXTERNAL_API_URL).toBe('http://127.0.0.1:9');
    }
  });

  it('runs the bundled worker: a record it cannot parse goes to the DLQ, its neighbour queue stays empty', async () => {
    const queue = rt.queue('payments');
    const dlq = queue.deadLetterQueue?.url ?? '';
    await rt.sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: 'not a CloudEvent' }));
    await rt.waitUntilDrained({ timeoutMs: 30_000 });
    const out = await rt.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: dlq, MessageAttributeNames: ['All'], WaitTimeSeconds: 1 }),
    );
    expect(out.Messages?.map((m) => m.Body)).toEqual(['not a CloudEvent']);
    expect(rt.stats().functions[rt.worker('payments').functionLogicalId]).toMatchObject({
      invocations: 1,
      recordsDeleted: 1,
      batchFailures: 0,
    });
  });
});
