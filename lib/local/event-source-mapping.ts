/**
 * Emulation of one `AWS::Lambda::EventSourceMapping` on an SQS queue (Lambda Developer Guide,
 * "Using Lambda with Amazon SQS", "services-sqs-parameters", "services-sqs-scaling",
 * "services-sqs-errorhandling"):
 *
 * - `concurrency` pollers each long-poll the queue (`WaitTimeSeconds` 20,
 *   `MessageSystemAttributeNames: ['All']`, `MessageAttributeNames: ['All']`), gather up to
 *   `BatchSize` messages within `MaximumBatchingWindowInSeconds`, and invoke the function with an
 *   `SQSEvent`; at most `concurrency` invocations run at once (`ScalingConfig.MaximumConcurrency`).
 * - Success: every record is deleted (DeleteMessageBatch). Partial failure (with
 *   `ReportBatchItemFailures`): every record except the reported ones is deleted. Thrown error,
 *   crash, timeout or malformed response: nothing is deleted, so the whole batch comes back after
 *   the queue's visibility timeout (and moves to the DLQ after `maxReceiveCount` receives).
 * - The visibility timeout is the queue's own; the mapping never changes it (the worker does,
 *   for its backoff).
 * - Each invocation gets the X-Ray trace header Lambda would set (`_X_AMZN_TRACE_ID`, xray.ts),
 *   continuing the records' `AWSTraceHeader`; a record whose chain already invoked the function
 *   16 times is held back when its `RecursiveLoop` is not `Allow` (Lambda's recursive loop
 *   detection): not delivered, not deleted, so it comes back after the visibility timeout and
 *   reaches the DLQ after `maxReceiveCount` receives.
 */
import { randomUUID } from 'node:crypto';
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { LostResponseFault } from './faults.ts';
import type { FunctionHost } from './function-host.ts';
import type { ThreadError } from './function-host-thread.ts';
import { interpretBatchResponse, toSqsRecord } from './sqs-event.ts';
import { type FunctionTracing, type StoppedRecord, traceInvocation } from './xray.ts';

/** Counters of one function (all mappings on it). Plain numbers, updated in place. */
export interface FunctionStats {
  /** Invocations started. */
  invocations: number;
  /** Invocations that waited for an execution environment's init phase (a cold start). */
  coldStarts: number;
  /** Invocations whose batch was settled as success or partial success. */
  succeeded: number;
  /** Invocations that threw, failed to load, or crashed. */
  errors: number;
  /** Invocations that ran past the function's timeout. */
  timeouts: number;
  /** Invocations whose response broke the `batchItemFailures` rules. */
  malformedResponses: number;
  /** Successful invocations whose response was dropped on purpose (fault injection). */
  lostResponses: number;
  /** Invocations that failed the whole batch (errors + timeouts + malformed + lost). */
  batchFailures: number;
  /** Invocations that reported at least one record in `batchItemFailures` (counted in `succeeded` too). */
  partialBatchFailures: number;
  /** Records delivered to the function (a redelivered message counts again). */
  recordsReceived: number;
  /** Records deleted from the queue after the function succeeded with them. */
  recordsDeleted: number;
  /** Records left on the queue (whole-batch failures and reported item failures). */
  recordsFailed: number;
  /** DeleteMessageBatch entries the queue refused (the record will be delivered again). */
  deleteFailures: number;
  /**
   * Records held back by the emulated recursive loop detection (Lambda's metric
   * `RecursiveInvocationsDropped`): each delivery of a stopped record counts.
   */
  recursiveInvocationsDropped: number;
}

/** A new set of zero counters. */
export function emptyStats(): FunctionStats {
  return {
    invocations: 0,
    coldStarts: 0,
    succeeded: 0,
    errors: 0,
    timeouts: 0,
    malformedResponses: 0,
    lostResponses: 0,
    batchFailures: 0,
    partialBatchFailures: 0,
    recordsReceived: 0,
    recordsDeleted: 0,
    recordsFailed: 0,
    deleteFailures: 0,
    recursiveInvocationsDropped: 0,
  };
}

/** What happened to one invocation, for progress displays and tests. */
export interface InvocationReport {
  readonly functionLogicalId: string;
  readonly mappingLogicalId: string;
  readonly queueUrl: string;
  readonly awsRequestId: string;
  /** Message ids of the batch, in event order. */
  readonly messageIds: readonly string[];
  /**
   * Receipt handles of the batch, in event order: with ChangeMessageVisibility (`VisibilityTimeout`
   * 0) a record left on the queue comes back at once instead of after the visibility timeout.
   */
  readonly receiptHandles: readonly string[];
  /**
   * `success` all deleted; `partial` some reported failed; `error` thrown / crashed / failed to
   * load; `timeout`; `malformed` response; `lost` response dropped by the fault hook.
   */
  readonly outcome: 'success' | 'partial' | 'error' | 'timeout' | 'malformed' | 'lost';
  /** Ids left on the queue. */
  readonly failedMessageIds: readonly string[];
  /** The function's error for `error`; the reason for `malformed`. */
  readonly error?: ThreadError | { readonly errorType: 'MalformedResponse'; readonly errorMessage: string };
  /** Invocation time in milliseconds (init excluded). */
  readonly durationMs: number;
  readonly coldStart: boolean;
}

/** Options of {@link EventSourceMappingPoller}. */
export interface EventSourceMappingPollerOptions {
  readonly mappingLogicalId: string;
  readonly functionLogicalId: string;
  readonly queue: { readonly url: string; readonly arn: string };
  readonly host: FunctionHost;
  readonly sqs: SQSClient;
  readonly region: string;
  /** `BatchSize`, 1–10,000. */
  readonly batchSize: number;
  /** `MaximumBatchingWindowInSeconds`, 0–300. */
  readonly maximumBatchingWindowSeconds: number;
  /** `ReportBatchItemFailures` in `FunctionResponseTypes`. */
  readonly reportBatchItemFailures: boolean;
  /** Pollers, and so concurrent invocations, of this mapping. Integer >= 1. */
  readonly concurrency: number;
  /** Counters to update (shared by the mappings of one function). */
  readonly stats: FunctionStats;
  readonly fault?: LostResponseFault;
  readonly onInvocation?: (report: InvocationReport) => void;
  /** Reports poll errors (emulator down...); polling goes on after a pause. */
  readonly onError?: (error: unknown) => void;
  /**
   * X-Ray trace header and recursive loop detection of the function (xray.ts). Without it,
   * invocations get no trace header and nothing is held back.
   */
  readonly tracing?: FunctionTracing & {
    /** The `AWSTraceHeader` SQS kept for a message, when the endpoint did not return it. */
    readonly headerOf?: (messageId: string) => string | undefined;
    /** Called for each record held back by the stop rule, with the receipt handle of its receive. */
    readonly onStopped?: (record: StoppedRecord, receiptHandle: string) => void;
  };
  /** Long-poll wait per ReceiveMessage, in seconds. @default 20 */
  readonly waitTimeSeconds?: number;
  /**
   * Receive from a FIFO queue one call at a time across this mapping's pollers, one message per
   * call, with short polls (`WaitTimeSeconds` 0, every {@link SERIALIZED_POLL_INTERVAL_MS})
   * standing in for the long poll, so no group ever has more than one message in flight. For an
   * emulator whose FIFO group lock does not hold otherwise; moto 5.2.1 (moto/sqs/models.py
   * `receive_message`) breaks group order twice: (1) it computes the groups in flight once, at
   * the start of a ReceiveMessage, so a long poll that began before a group's message went in
   * flight hands out the group's next message as well; (2) when two messages of a group are in
   * flight and their visibility timeouts pass (a failed batch), it skips the first (its group
   * still looks in flight) and hands out the second. SQS does neither. Standard queues are
   * received as usual. @default false
   */
  readonly serializeFifoReceives?: boolean;
}

/** Interval of the short polls of {@link EventSourceMappingPollerOptions.serializeFifoReceives}, ms. */
export const SERIALIZED_POLL_INTERVAL_MS = 200;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Pollers of one event source mapping. */
export class EventSourceMappingPoller {
  private readonly options: EventSourceMappingPollerOptions;
  private readonly abort = new AbortController();
  private loops: Promise<void>[] = [];
  private active = 0;
  /** Tail of the serialized receives (see `serializeFifoReceives`). */
  private receiveTail: Promise<unknown> = Promise.resolve();

  constructor(options: EventSourceMappingPollerOptions) {
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new RangeError(`concurrency must be an integer >= 1, got ${options.concurrency}`);
    }
    this.options = options;
  }

  /** Batches received and not settled yet (being gathered, invoked or deleted). */
  get inFlight(): number {
    return this.active;
  }

  /** Starts the pollers. */
  start(): void {
    if (this.loops.length > 0) return;
    for (let i = 0; i < this.options.concurrency; i++) this.loops.push(this.loop());
  }

  /**
   * Stops receiving (pending long polls are aborted) and waits for the pollers to finish their
   * current batch. Stop the function host too, or an invocation in progress keeps this waiting.
   */
  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all(this.loops);
  }

  private get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        const batch = await this.gather();
        if (batch.length === 0 || this.stopped) continue;
        await this.process(batch);
      } catch (error) {
        if (this.stopped) break;
        this.options.onError?.(error);
        await sleep(250);
      }
    }
  }

  private async receive(max: number, waitTimeSeconds: number): Promise<Message[]> {
    if (this.options.serializeFifoReceives && this.options.queue.url.endsWith('.fifo')) {
      const deadline = Date.now() + waitTimeSeconds * 1000;
      for (;;) {
        const turn = this.receiveTail.then(() => this.receiveOnce(1, 0));
        this.receiveTail = turn.catch(() => {});
        const messages = await turn;
        if (messages.length > 0 || this.stopped || Date.now() >= deadline) return messages;
        await new Promise<void>((resolve) => {
          const signal = this.abort.signal;
          const done = () => {
            clearTimeout(timer);
            signal.removeEventListener('abort', done);
            resolve();
          };
          const timer = setTimeout(done, SERIALIZED_POLL_INTERVAL_MS);
          signal.addEventListener('abort', done, { once: true });
        });
      }
    }
    return this.receiveOnce(max, waitTimeSeconds);
  }

  private async receiveOnce(max: number, waitTimeSeconds: number): Promise<Message[]> {
    const out = await this.options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.options.queue.url,
        MaxNumberOfMessages: Math.min(10, max),
        WaitTimeSeconds: waitTimeSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: this.abort.signal },
    );
    return out.Messages ?? [];
  }

  /** Up to `batchSize` messages: one long poll, then more within the batching window. */
  private async gather(): Promise<Message[]> {
    const { batchSize, maximumBatchingWindowSeconds } = this.options;
    const first = await this.receive(batchSize, this.options.waitTimeSeconds ?? 20);
    if (first.length === 0) return first;
    this.active++;
    try {
      const batch = [...first];
      const windowMs = maximumBatchingWindowSeconds * 1000;
      const deadline = Date.now() + windowMs;
      while (batch.length < batchSize && windowMs > 0 && !this.stopped) {
        const remaining = deadline - Date.now();
        if (remaining <= 0) break;
        const wait = Math.min(20, Math.floor(remaining / 1000));
        const seen = new Set(batch.map((m) => m.MessageId));
        const more = (await this.receive(batchSize - batch.length, wait)).filter(
          (m) => !seen.has(m.MessageId),
        );
        batch.push(...more);
        if (more.length === 0 && wait === 0) await sleep(Math.min(remaining, 50));
      }
      return batch;
    } catch (error) {
      this.active--;
      throw error;
    }
  }

  private async process(received: Message[]): Promise<void> {
    const { options } = this;
    const { stats } = options;
    try {
      const { messages, traceHeader } = this.trace(received);
      if (messages.length === 0) return;
      const records = messages.map((m) => toSqsRecord(m, options.queue.arn, options.region));
      const ids = records.map((r) => r.messageId);
      const awsRequestId = randomUUID();
      stats.invocations++;
      stats.recordsReceived += records.length;
      const outcome = await options.host.invoke({ Records: records }, awsRequestId, traceHeader);
      if (outcome.coldStart) stats.coldStarts++;
      let report: Omit<InvocationReport, 'failedMessageIds'> & { failedMessageIds?: readonly string[] };
      const base = {
        functionLogicalId: options.functionLogicalId,
        mappingLogicalId: options.mappingLogicalId,
        queueUrl: options.queue.url,
        awsRequestId,
        messageIds: ids,
        receiptHandles: messages.map((m) => m.ReceiptHandle ?? ''),
        durationMs: outcome.durationMs,
        coldStart: outcome.coldStart,
      };
      let toDelete: Message[] = [];
      if (outcome.kind === 'timeout') {
        stats.timeouts++;
        report = { ...base, outcome: 'timeout' };
      } else if (outcome.kind === 'error') {
        stats.errors++;
        report = { ...base, outcome: 'error', error: outcome.error };
      } else if (options.fault?.shouldLose()) {
        stats.lostResponses++;
        report = { ...base, outcome: 'lost' };
      } else {
        const verdict = interpretBatchResponse(outcome.payload, ids, options.reportBatchItemFailures);
        if (verdict.kind === 'failure') {
          stats.malformedResponses++;
          report = {
            ...base,
            outcome: 'malformed',
            error: { errorType: 'MalformedResponse', errorMessage: verdict.reason },
          };
        } else if (verdict.kind === 'partial') {
          stats.succeeded++;
          stats.partialBatchFailures++;
          const failed = new Set(verdict.failedIds);
          toDelete = messages.filter((m) => !failed.has(m.MessageId ?? ''));
          report = { ...base, outcome: 'partial', failedMessageIds: verdict.failedIds };
        } else {
          stats.succeeded++;
          toDelete = messages;
          report = { ...base, outcome: 'success', failedMessageIds: [] };
        }
      }
      if (report.outcome !== 'success' && report.outcome !== 'partial') stats.batchFailures++;
      const failedMessageIds = report.failedMessageIds ?? ids;
      stats.recordsFailed += failedMessageIds.length;
      await this.delete(toDelete);
      options.onInvocation?.({ ...report, failedMessageIds });
    } finally {
      this.active--;
    }
  }

  /**
   * The invocation's trace header and the messages to deliver (xray.ts): each gets the
   * `AWSTraceHeader` SQS kept for it; the ones the recursion stop rule holds back stay on the
   * queue, counted and reported.
   */
  private trace(received: Message[]): { messages: Message[]; traceHeader: string | undefined } {
    const tracing = this.options.tracing;
    if (tracing === undefined) return { messages: received, traceHeader: undefined };
    const withHeaders = received.map((m) => {
      const kept = m.Attributes?.AWSTraceHeader ?? tracing.headerOf?.(m.MessageId ?? '');
      return kept === undefined || m.Attributes?.AWSTraceHeader !== undefined
        ? m
        : { ...m, Attributes: { ...m.Attributes, AWSTraceHeader: kept } };
    });
    const trace = traceInvocation(
      withHeaders,
      (m) => m.Attributes?.AWSTraceHeader,
      (m) => m.MessageId ?? '',
      tracing,
    );
    this.options.stats.recursiveInvocationsDropped += trace.stopped.length;
    for (const stopped of trace.stopped) {
      const receiptHandle = received.find((m) => m.MessageId === stopped.messageId)?.ReceiptHandle ?? '';
      tracing.onStopped?.(stopped, receiptHandle);
    }
    return { messages: [...trace.deliver], traceHeader: trace.traceHeader };
  }

  private async delete(messages: Message[]): Promise<void> {
    const { stats } = this.options;
    for (let i = 0; i < messages.length; i += 10) {
      const chunk = messages.slice(i, i + 10);
      try {
        const out = await this.options.sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: this.options.queue.url,
            Entries: chunk.map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle })),
          }),
        );
        const failed = out.Failed?.length ?? 0;
        stats.recordsDeleted += chunk.length - failed;
        stats.deleteFailures += failed;
      } catch (error) {
        stats.deleteFailures += chunk.length;
        this.options.onError?.(error);
      }
    }
  }
}
