/**
 * A fake SQS client for unit tests: records every command, answers like SQS, and fails on
 * demand. Satisfies the worker's `SqsSender`.
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
import type { SqsSender, WorkerSqsCommand } from '../../lib/runtime/sqs-port.ts';

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

export class FakeSqs implements SqsSender {
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

  /** Entries of all SendMessageBatch calls. */
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
  throw new Error(`FakeSqs: unexpected command ${(command as object).constructor.name}`);
}
