/**
 * The wait of a record over a flow-control limit (per-key concurrency, a rate limit): how it
 * leaves the invocation without spending an attempt, and without ever being pushed into the DLQ
 * by the queue's redrive policy.
 *
 * Why a copy is re-sent on standard queues: an attempt is counted by the idempotency record, so a
 * visibility delay (what a `busy` record gets) spends none; but every delivery raises SQS's
 * `ApproximateReceiveCount`, and the redrive policy moves the message to the DLQ once it passes
 * `maxReceiveCount` (attempts + 5 by default), without evidence. A job that waits behind a busy
 * tenant may wait many times, so a receive-count budget would sooner or later be spent on waiting.
 * Instead the worker sends the same message again (SendMessage of the same body, attributes,
 * fair-queue `MessageGroupId` and `AWSTraceHeader`, with `DelaySeconds` as the wait) and
 * acknowledges this delivery: the copy starts at receive count 1, so waiting never counts towards
 * the redrive. The same number of SQS calls as a visibility change (one). If the send fails, the
 * record falls back to a visibility delay (one receive spent, within the margin). If the send
 * succeeds but the acknowledgement is lost, both copies carry the same job id: the idempotency
 * lease runs it once. The copy counts its waits in the message attribute
 * {@link LIMIT_WAITS_ATTRIBUTE}, which grows the delay (exponential, full jitter).
 *
 * FIFO queues: a copy would go behind the group's later messages and break their order, so the
 * record waits in place with a visibility delay, holding its group (order kept; the batch
 * scheduler holds the group's later records of the batch). This spends receives: see
 * docs/architecture.md, "Flow control".
 */
import type { SQSRecord } from 'aws-lambda';
import { fullJitterDelay } from '../../core/backoff.ts';
import { isFifoQueueUrl } from '../../core/queue-urls.ts';
import { loadSqsModule } from '../sqs-module.ts';
import type { AnyJob } from './deps.ts';
import { type RecordOutcome, retry } from './outcome.ts';
import type { RecordRun } from './record-run.ts';

/** Message attribute (Number) counting how many times a message waited on a limit. */
export const LIMIT_WAITS_ATTRIBUTE = 'sqsjobs-limit-waits';
/** Upper bound of the first wait, in seconds; doubles per wait up to {@link LIMIT_WAIT_CAP_SECONDS}. */
export const LIMIT_WAIT_BASE_SECONDS = 1;
/** Longest wait, in seconds. */
export const LIMIT_WAIT_CAP_SECONDS = 60;
/** SendMessage `DelaySeconds` maximum (SendMessage API reference). */
const MAX_SEND_DELAY_SECONDS = 900;
/** Most message attributes of one SQS message (sqs-message-metadata). */
const MAX_MESSAGE_ATTRIBUTES = 10;

/** What the record waits for, for its log line and metric. */
export interface LimitWaitFacts {
  /** `concurrency` or `rate`. */
  readonly kind: 'concurrency' | 'rate';
  /** The limit's name. */
  readonly limit: string;
  /** The key of the limit (tenant...). */
  readonly key: string;
  /** At least this long, in milliseconds (the rate limit's estimate); 0 when unknown. */
  readonly minWaitMs: number;
}

/** The record waits: re-sent with a delay (standard), or a visibility delay (FIFO). Never throws. */
export async function waitForLimit(
  run: RecordRun,
  job: AnyJob,
  facts: LimitWaitFacts,
): Promise<RecordOutcome> {
  const { deps, record } = run;
  const waits = waitsOf(record);
  const floor = Math.ceil(facts.minWaitMs / 1000);
  const delaySeconds = Math.min(
    MAX_SEND_DELAY_SECONDS,
    fullJitterDelay(waits + 1, LIMIT_WAIT_BASE_SECONDS, LIMIT_WAIT_CAP_SECONDS, floor, deps.random),
  );
  deps.metrics.add(job.type, 'JobLimitDelayed');
  const fields = {
    outcome: 'waiting',
    limitKind: facts.kind,
    limit: facts.limit,
    limitKey: facts.key,
    delaySeconds,
    waits,
  };
  if (!isFifoQueueUrl(deps.config.queueUrl)) {
    try {
      await resend(run, delaySeconds, waits + 1);
      run.logger.info('limit full; the job waits (re-sent with a delay, no attempt spent)', fields);
      return { status: 'resent', delaySeconds };
    } catch (error) {
      run.logger.warn('limit full and the re-send failed; the job waits with a visibility delay', {
        ...fields,
        error,
      });
    }
  } else {
    run.logger.info('limit full; the job waits in its group (visibility delay, no attempt spent)', fields);
  }
  return retry(delaySeconds, 'limited');
}

/** How many times this message already waited on a limit (its {@link LIMIT_WAITS_ATTRIBUTE}). */
function waitsOf(record: SQSRecord): number {
  const raw = Number(record.messageAttributes?.[LIMIT_WAITS_ATTRIBUTE]?.stringValue);
  return Number.isInteger(raw) && raw >= 0 ? raw : 0;
}

/** Sends the record's message again, visible after `delaySeconds`. @throws what SQS throws */
async function resend(run: RecordRun, delaySeconds: number, waits: number): Promise<void> {
  const { record, deps } = run;
  const { SendMessageCommand } = await loadSqsModule();
  const attributes: Record<string, { DataType: string; StringValue?: string; BinaryValue?: Uint8Array }> = {};
  for (const [name, value] of Object.entries(record.messageAttributes ?? {})) {
    if (name === LIMIT_WAITS_ATTRIBUTE) continue;
    attributes[name] = {
      DataType: value.dataType,
      ...(value.stringValue === undefined ? {} : { StringValue: value.stringValue }),
      ...(value.binaryValue === undefined ? {} : { BinaryValue: Buffer.from(value.binaryValue, 'base64') }),
    };
  }
  // Counted only while a slot is left: the message's own attributes come first.
  if (Object.keys(attributes).length < MAX_MESSAGE_ATTRIBUTES) {
    attributes[LIMIT_WAITS_ATTRIBUTE] = { DataType: 'Number', StringValue: String(waits) };
  }
  const traceHeader = record.attributes?.AWSTraceHeader;
  const groupId = record.attributes?.MessageGroupId;
  await deps.sqs.send(
    new SendMessageCommand({
      QueueUrl: deps.config.queueUrl,
      MessageBody: record.body,
      DelaySeconds: delaySeconds,
      ...(Object.keys(attributes).length > 0 ? { MessageAttributes: attributes } : {}),
      // A fair queue's tenant stays the tenant (sqs-fair-queues).
      ...(groupId === undefined ? {} : { MessageGroupId: groupId }),
      // The record's own header, unchanged: Lambda's recursion count of the chain stays where it
      // was (a wait is not a step of the chain; docs/architecture.md, "recursiveLoop").
      ...(traceHeader === undefined
        ? {}
        : { MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: traceHeader } } }),
    }),
  );
}
