/**
 * A worker wired to fakes for unit tests: FakeSqs, an optional FakeGuard, a Powertools Logger
 * and Metrics whose output (JSON lines on stdout) is captured per invocation.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { SQSBatchResponse, SQSRecord } from 'aws-lambda';
import { vi } from 'vitest';
import type { WorkerFeature } from '../../lib/runtime/features/feature.ts';
import {
  createLeanWorker,
  createWorker,
  type WorkerHandler,
  type WorkerOptions,
} from '../../lib/runtime/worker.ts';
import { FakeSqs } from './fake-sqs.ts';
import { lambdaContext, queueUrl, sqsEvent, type TestContext } from './sqs.ts';

export const QUEUE_URL = queueUrl('jobs');
export const DLQ_URL = queueUrl('jobs-dlq');
export const FIFO_QUEUE_URL = queueUrl('jobs.fifo');
export const FIFO_DLQ_URL = queueUrl('jobs-dlq.fifo');
export const HANDLER_VERSION = '42';

/** One structured line printed during an invocation (a log entry or an EMF blob). */
export type OutputLine = Record<string, unknown>;

/** What an invocation returned and printed. */
export interface Invocation {
  readonly response: SQSBatchResponse;
  /** Log entries (Powertools Logger JSON). */
  readonly logs: OutputLine[];
  /** EMF blobs (lines with `_aws`). */
  readonly emf: OutputLine[];
}

/**
 * Runs `fn` with stdout and stderr captured (Powertools writes warnings and errors to stderr);
 * returns its value and everything written, as text, byte for byte.
 */
export async function captureText<T>(fn: () => Promise<T>): Promise<{ value: T; text: string }> {
  const chunks: string[] = [];
  const collect = (chunk: string | Uint8Array) => {
    chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  };
  const spies = [
    vi.spyOn(process.stdout, 'write').mockImplementation(collect),
    vi.spyOn(process.stderr, 'write').mockImplementation(collect),
  ];
  try {
    return { value: await fn(), text: chunks.join('') };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}

/** As {@link captureText}, returning the JSON lines printed meanwhile. */
export async function captureOutput<T>(fn: () => Promise<T>): Promise<{ value: T; lines: OutputLine[] }> {
  const { value, text } = await captureText(fn);
  const lines: OutputLine[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      lines.push(JSON.parse(line) as OutputLine);
    } catch {
      // Not JSON (stray output): not ours to assert on.
    }
  }
  return { value, lines };
}

/** A worker under test and its fakes. */
export interface WorkerHarness {
  readonly handler: WorkerHandler;
  readonly sqs: FakeSqs;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  /** Invokes the handler with `records` (and a context with 60 s left unless given). */
  invoke(records: readonly SQSRecord[], context?: TestContext): Promise<Invocation>;
}

/**
 * Builds a worker for tests. Defaults: queue `jobs` (or `jobs.fifo` with `fifo: true`), a DLQ
 * of the same kind, handler version `42`, no idempotency, empty environment. With `features`,
 * the worker of `sqs-jobs/worker` with those features only; without, `sqs-jobs`' (all of them).
 */
export function workerHarness(
  options: Partial<WorkerOptions> &
    Pick<WorkerOptions, 'jobs'> & { readonly fifo?: boolean; readonly features?: readonly WorkerFeature[] },
): WorkerHarness {
  const { fifo, features, ...rest } = options;
  const sqs = (rest.sqs as FakeSqs | undefined) ?? new FakeSqs();
  const queue = fifo ? FIFO_QUEUE_URL : QUEUE_URL;
  const dlq = fifo ? FIFO_DLQ_URL : DLQ_URL;
  const metrics = new Metrics({ namespace: 'SqsJobs', serviceName: 'sqs-jobs-test' });
  metrics.clearDefaultDimensions();
  const create = features === undefined ? createWorker : createLeanWorker;
  const handler = create({
    ...(features === undefined ? {} : { features }),
    queueName: 'jobs',
    queueUrl: queue,
    dlqUrl: dlq,
    handlerVersion: HANDLER_VERSION,
    idempotency: false,
    logger: new Logger({ serviceName: 'sqs-jobs-test', logLevel: 'DEBUG' }),
    metrics,
    env: {},
    ...rest,
    sqs,
  });
  return {
    handler,
    sqs,
    queueUrl: queue,
    dlqUrl: dlq,
    async invoke(records, context = lambdaContext()) {
      const { value, lines } = await captureOutput(() => handler(sqsEvent(records), context));
      return {
        response: value,
        logs: lines.filter((line) => !('_aws' in line)),
        emf: lines.filter((line) => '_aws' in line),
      };
    },
  };
}

/** Message ids reported failed, in response order. */
export function failedIds(response: SQSBatchResponse): string[] {
  return response.batchItemFailures.map((f) => f.itemIdentifier);
}
