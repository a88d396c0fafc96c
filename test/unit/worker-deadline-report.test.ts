/**
 * A deadline close to the end leaves time to report (issue 22): the SQS module that reporting a
 * failure needs is loaded ahead of the moment the run limits fire, so a record failing there is
 * still answered in `batchItemFailures` before the Lambda deadline; and a batch that ends early
 * never loads it (the all-success path stays as cheap as before).
 *
 * The module's load is made slow here (`LOAD_MS`, as on a small Lambda, whose CPU share makes the
 * import take seconds), and nothing else in this file imports the SDK, so the worker's own import
 * is the first.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { SQSRecord } from 'aws-lambda';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record/index.ts';
import type { SqsSender, WorkerSqsCommand } from '../../lib/runtime/sqs-port.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { jobBody, lambdaContext, queueUrl, sqsEvent, sqsRecord, type TestContext } from '../factories/sqs.ts';

const load = vi.hoisted(() => ({ durationMs: 1_000, startedAtMs: undefined as number | undefined }));
const LOAD_MS = load.durationMs;

vi.mock('@aws-sdk/client-sqs', async (importOriginal) => {
  load.startedAtMs = Date.now();
  await new Promise((resolve) => setTimeout(resolve, load.durationMs));
  return importOriginal();
});

/** Records the commands by class name, without importing the SDK. */
class RecordingSqs implements SqsSender {
  readonly calls: { readonly command: string; readonly input: unknown }[] = [];
  async send(command: WorkerSqsCommand): Promise<unknown> {
    this.calls.push({ command: command.constructor.name, input: command.input });
    return {};
  }
}

const schema = z.object({ n: z.number() });

/** A worker on `sqs` (test/factories/worker.ts is not used: its FakeSqs imports the SDK). */
function invoke(job: AnyJob, sqs: SqsSender, marginMs: number, records: SQSRecord[], context: TestContext) {
  const handler = createWorker({
    jobs: [job],
    queueName: 'jobs',
    queueUrl: queueUrl('jobs'),
    dlqUrl: queueUrl('jobs-dlq'),
    idempotency: false,
    sqs,
    deadlineMarginMs: marginMs,
    logger: new Logger({ serviceName: 'sqs-jobs-test', logLevel: 'SILENT' }),
    env: { POWERTOOLS_METRICS_DISABLED: 'true' },
  });
  return handler(sqsEvent(records), context);
}

describe('reporting near the deadline', () => {
  it('does not load the SQS module for a batch that completes well before its deadline', async () => {
    const sqs = new RecordingSqs();
    const job = defineJob({ type: 'quick.job', queue: 'jobs', schema, run: async () => {} });
    const response = await invoke(
      job,
      sqs,
      500,
      [sqsRecord({ body: jobBody('quick.job', { n: 1 }) })],
      lambdaContext(60_000),
    );
    expect(response.batchItemFailures).toEqual([]);
    expect(load.startedAtMs).toBeUndefined();
  });

  it('answers a record that fails at the deadline minus a small margin before the deadline', async () => {
    const sqs = new RecordingSqs();
    const marginMs = 500;
    // Waits out its run limit (the Lambda deadline minus the margin), then fails transiently.
    const job = defineJob({
      type: 'slow.job',
      queue: 'jobs',
      schema,
      timeoutSeconds: 900,
      run: (_data, ctx) =>
        new Promise<void>((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
        }),
    });
    const remainingMs = 3 * LOAD_MS;
    const deadlineMs = Date.now() + remainingMs;
    const record = sqsRecord({ body: jobBody('slow.job', { n: 1 }) });
    const response = await invoke(job, sqs, marginMs, [record], lambdaContext(remainingMs));
    const answeredAtMs = Date.now();

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    expect(sqs.calls).toEqual([
      {
        command: 'ChangeMessageVisibilityCommand',
        input: expect.objectContaining({ ReceiptHandle: record.receiptHandle }),
      },
    ]);
    // In Lambda an answer after the deadline is a timeout: the whole batch would come back.
    expect(answeredAtMs).toBeLessThanOrEqual(deadlineMs);
    expect(load.startedAtMs).toBeDefined();
  });
});
