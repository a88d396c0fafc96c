/**
 * An SQS client in memory for tests of a worker: records every command the worker sends (DLQ
 * sends with their evidence attributes, children sent by `ctx.enqueue`, visibility changes of
 * retried records), answers as SQS does, and fails on demand. Satisfies the worker's `SqsSender`
 * (`createWorker({ sqs })`); the repo's own unit tests use it as `FakeSqs`
 * (test/factories/fake-sqs.ts).
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  ChangeMessageVisibilityCommand,
  type ChangeMessageVisibilityCommandInput,
  SendMessageBatchCommand,
  type SendMessageBatchCommandInput,
  SendMessageCommand,
  type SendMessageCommandInput,
} from '@aws-sdk/client-sqs';
import { JobError } from '../core/errors.ts';
import type { SqsSender, WorkerSqsCommand } from '../runtime/sqs-port.ts';

/** A recorded call, by action. */
export type SqsCall =
  | { readonly action: 'SendMessage'; readonly input: SendMessageCommandInput }
  | { readonly action: 'SendMessageBatch'; readonly input: SendMessageBatchCommandInput }
  | { readonly action: 'ChangeMessageVisibility'; readonly input: ChangeMessageVisibilityCommandInput };

/** Decides whether a call fails: return an error to throw it. */
export type FailRule = (call: SqsCall) => Error | undefined;

function md5(text: string): string {
  return createHash('md5').update(text).digest('hex');
}

/**
 * Pass it as `createWorker({ sqs })`: the worker's dead letters, children and retries land here.
 *
 * @example
 * ```ts
 * import { createWorker, defineJob, PermanentError } from 'sqs-jobs';
 * import { jobRecord, lambdaContext, MemorySqs, queueUrl, sqsEvent } from 'sqs-jobs/testing';
 * import { z } from 'zod';
 *
 * const refund = defineJob({
 *   type: 'payments.refund',
 *   queue: 'payments',
 *   schema: z.object({ paymentId: z.string() }),
 *   async run() {
 *     throw new PermanentError('payment not found');
 *   },
 * });
 * const sqs = new MemorySqs();
 * const handler = createWorker({
 *   jobs: [refund],
 *   idempotency: false,
 *   sqs,
 *   queueName: 'payments',
 *   queueUrl: queueUrl('payments'),
 *   dlqUrl: queueUrl('payments-dlq'),
 * });
 * await handler(sqsEvent([jobRecord(refund, { paymentId: 'p-1' })]), lambdaContext());
 * const [deadLetter] = sqs.sentTo(queueUrl('payments-dlq'));
 * // deadLetter?.MessageAttributes?.ErrorName?.StringValue === 'PermanentError'
 * ```
 */
export class MemorySqs implements SqsSender {
  /** Every command sent, in order. */
  readonly calls: SqsCall[] = [];
  #fail: FailRule = () => undefined;

  /** Makes matching calls throw (the call is still recorded). */
  failWhen(rule: FailRule): this {
    this.#fail = rule;
    return this;
  }

  async send(command: WorkerSqsCommand): Promise<unknown> {
    const call = toCall(command);
    this.calls.push(call);
    const error = this.#fail(call);
    if (error) throw error;
    switch (call.action) {
      case 'SendMessage':
        return { MessageId: randomUUID(), MD5OfMessageBody: md5(call.input.MessageBody ?? '') };
      case 'SendMessageBatch':
        return {
          Successful: (call.input.Entries ?? []).map((entry) => ({
            Id: entry.Id,
            MessageId: randomUUID(),
            MD5OfMessageBody: md5(entry.MessageBody ?? ''),
          })),
          Failed: [],
        };
      case 'ChangeMessageVisibility':
        return {};
    }
  }

  /** Inputs of SendMessage calls to a queue URL (the DLQ sends). */
  sentTo(queueUrl: string): SendMessageCommandInput[] {
    return this.calls.flatMap((c) =>
      c.action === 'SendMessage' && c.input.QueueUrl === queueUrl ? [c.input] : [],
    );
  }

  /** Inputs of ChangeMessageVisibility calls. */
  visibilityChanges(): ChangeMessageVisibilityCommandInput[] {
    return this.calls.flatMap((c) => (c.action === 'ChangeMessageVisibility' ? [c.input] : []));
  }

  /** Entries of all SendMessageBatch calls (the children the worker sent). */
  batchEntries(): NonNullable<SendMessageBatchCommandInput['Entries']> {
    return this.calls.flatMap((c) => (c.action === 'SendMessageBatch' ? (c.input.Entries ?? []) : []));
  }
}

function toCall(command: WorkerSqsCommand): SqsCall {
  if (command instanceof SendMessageCommand) return { action: 'SendMessage', input: command.input };
  if (command instanceof SendMessageBatchCommand) return { action: 'SendMessageBatch', input: command.input };
  if (command instanceof ChangeMessageVisibilityCommand) {
    return { action: 'ChangeMessageVisibility', input: command.input };
  }
  throw new JobError(`MemorySqs: unexpected command ${(command as object).constructor.name}`);
}
