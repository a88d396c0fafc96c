/**
 * Message and batch sizes as SQS counts them: the UTF-8 bytes of the body plus every part of
 * every message attribute (name, data type and value). Sources: SendMessage API reference
 * (MessageBody: 1 MiB maximum) and MessageAttributeValue ("All parts of the message attribute,
 * including Name, Type, and Value, are part of the message size restriction").
 */
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';

/** Largest message SQS accepts, and largest SendMessageBatch request (sum of its messages): 1 MiB. */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;

/** Most entries one SendMessageBatch request may carry (SendMessageBatch API reference). */
export const SQS_MAX_BATCH_ENTRIES = 10;

/** UTF-8 length of a string, in bytes. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The parts of a SendMessage / SendMessageBatch entry that count toward its size. */
export interface SizedMessage {
  readonly MessageBody?: string | undefined;
  readonly MessageAttributes?: Readonly<Record<string, MessageAttributeValue>> | undefined;
}

/** Size of one message in bytes: body + attribute names, data types and values (UTF-8). */
export function messageSizeBytes(message: SizedMessage): number {
  let bytes = utf8Bytes(message.MessageBody ?? '');
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    bytes += utf8Bytes(name) + utf8Bytes(value.DataType ?? '');
    if (value.StringValue !== undefined) bytes += utf8Bytes(value.StringValue);
    if (value.BinaryValue !== undefined) bytes += value.BinaryValue.byteLength;
  }
  return bytes;
}
