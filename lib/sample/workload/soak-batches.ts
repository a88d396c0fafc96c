/**
 * The soak's batches of a workload (`--batches N`, lib/sample/soak-batches.ts): planned (pure),
 * sent as `soak.batch-start` jobs, and read back at the end (batch items, dead letters) for the
 * report's soak batch invariants (report/batches.ts).
 *
 * Each batch has {@link SOAK_BATCH_CHILDREN} children; every tenth (from the fourth) has a child
 * that is dead-lettered on purpose, every tenth (from the eighth) a child that starts a nested
 * batch of {@link SOAK_BATCH_CHILDREN} children: small batches, so that a thousand of them run in
 * minutes, and each kind (completed, completed with failures, nested) hundreds of times.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { JobClient } from '../../client/job-client.ts';
import { batchEntry } from '../../client/job-client.ts';
import type { DeadLetterMessage } from '../../ops/dead-letter-message.ts';
import type { BatchCounters, SoakBatchFacts } from '../report/batches.ts';
import {
  isSoakBatchServiceReference,
  nestedBatchKey,
  SOAK_BATCH_CHILD_TYPE,
  soakBatchJobs,
  soakBatchServiceReference,
} from '../soak-batches.ts';
import type { CollectedDeadLetter } from './dead-letters.ts';

/** Children of each soak batch (and of each nested one). */
export const SOAK_BATCH_CHILDREN = 2;

/** One root batch of the soak: its key and its children. */
export interface SoakBatchPlan {
  readonly batchKey: string;
  readonly children: readonly { readonly fail: boolean; readonly nest: number }[];
}

/** The soak's `count` root batches for run `runId` (pure, deterministic). */
export function planSoakBatches(count: number, runId: string): SoakBatchPlan[] {
  return Array.from({ length: count }, (_, i) => ({
    batchKey: `${runId}-b${i}`,
    children: Array.from({ length: SOAK_BATCH_CHILDREN }, (_, index) => ({
      fail: i % 10 === 3 && index === SOAK_BATCH_CHILDREN - 1,
      nest: i % 10 === 7 && index === 0 ? SOAK_BATCH_CHILDREN : 0,
    })),
  }));
}

/** Every batch the plan starts, roots and nested, with its children and planned failures (pure). */
export function plannedSoakBatches(plans: readonly SoakBatchPlan[]): SoakBatchFacts['planned'] {
  const planned: Record<string, { children: number; failures: number }> = {};
  for (const plan of plans) {
    planned[plan.batchKey] = {
      children: plan.children.length,
      failures: plan.children.filter((c) => c.fail).length,
    };
    plan.children.forEach((c, index) => {
      if (c.nest > 0) planned[nestedBatchKey(plan.batchKey, index)] = { children: c.nest, failures: 0 };
    });
  }
  return planned;
}

/** Jobs the plan runs when nothing goes wrong: starters, children, completion jobs (pure). */
export function soakBatchJobCount(plans: readonly SoakBatchPlan[]): number {
  const planned = Object.values(plannedSoakBatches(plans));
  return plans.length + planned.reduce((acc, b) => acc + b.children + 1, 0);
}

/**
 * Sends the plan's `soak.batch-start` jobs (ids `soak-<batchKey>`), 100 entries per `sendBatch`.
 * @throws {Error} naming the entries SQS did not take after the client's retries.
 */
export async function sendSoakBatches(
  client: JobClient,
  plans: readonly SoakBatchPlan[],
  onSent: (n: number) => void = () => {},
): Promise<void> {
  for (let i = 0; i < plans.length; i += 100) {
    const chunk = plans.slice(i, i + 100);
    const { failed } = await client.sendBatch(
      chunk.map((plan) =>
        batchEntry(
          soakBatchJobs.start,
          { batchKey: plan.batchKey, children: plan.children.map((c) => ({ ...c })) },
          { id: `soak-${plan.batchKey}` },
        ),
      ),
    );
    if (failed.length > 0)
      throw new Error(
        `SQS did not take ${failed.length} soak batch starts: ${failed.map((f) => f.id).join(', ')}`,
      );
    onSent(chunk.length);
  }
}

/** A body's job type, id and data, when it is a JSON envelope. */
function envelopeOf(
  body: string,
): { type?: unknown; id?: unknown; data?: Record<string, unknown> } | undefined {
  try {
    const parsed = JSON.parse(body) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, never>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why a dead letter was meant to be one: a soak child with `fail` set, or a soak completion job
 * whose email the fake mail API refused with an injected 400 (`faultsByReference`, a permanent
 * error: the run redrives it once the queues drain, ./soak-redrive.ts); else undefined.
 */
export function explainSoakDeadLetter(
  dl: Pick<CollectedDeadLetter, 'body' | 'attributes'>,
  faultsByReference: Readonly<Record<string, readonly string[]>> = {},
): string | undefined {
  const envelope = envelopeOf(dl.body);
  if (envelope?.type === SOAK_BATCH_CHILD_TYPE && envelope.data?.fail === true)
    return 'deliberate batch child failure (complete-with-failures)';
  const key = injected400Completion(dl.body, dl.attributes.ErrorReason, faultsByReference);
  return key === undefined
    ? undefined
    : 'injected 400 on a batch completion job (redriven once the queues drained)';
}

/**
 * The batch key of a soak completion job dead-lettered by an HTTP 400 (its evidence's
 * `ErrorReason`) that the fake mail API confirms it injected (`badRequest` among the faults of the
 * batch's summary reference); else undefined.
 */
function injected400Completion(
  body: string,
  errorReason: string | undefined,
  faultsByReference: Readonly<Record<string, readonly string[]>>,
): string | undefined {
  const envelope = envelopeOf(body);
  const key = envelope?.data?.batchKey;
  if (envelope?.type !== soakBatchJobs.summary.type || typeof key !== 'string') return undefined;
  const injected = faultsByReference[soakBatchServiceReference(key)] ?? [];
  return errorReason === 'HTTP 400' && injected.includes('badRequest') ? key : undefined;
}

/**
 * The batch key of a DLQ message the soak redrives (pure): a soak completion job dead-lettered by
 * an HTTP 400 the fake mail API confirms it injected; undefined for any other dead letter, which
 * stays in its DLQ.
 */
export function refusedSoakCompletionKey(
  message: Pick<DeadLetterMessage, 'body' | 'reason'>,
  faultsByReference: Readonly<Record<string, readonly string[]>>,
): string | undefined {
  return injected400Completion(message.body, message.reason, faultsByReference);
}

/**
 * Whether the fake mail API injected a 400 into any soak batch's summary email (pure): only then
 * can a completion job be in a DLQ for the soak to redrive, so without it the DLQ is not read.
 */
export function anySoakCompletionRefused(
  faultsByReference: Readonly<Record<string, readonly string[]>>,
): boolean {
  return Object.entries(faultsByReference).some(
    ([reference, faults]) => isSoakBatchServiceReference(reference) && faults.includes('badRequest'),
  );
}

/** Batch keys of the soak completion jobs in the DLQs by an injected HTTP 400 (pure). */
export function soakCompletionsRefused(
  deadLetters: readonly Pick<CollectedDeadLetter, 'body' | 'attributes'>[],
  faultsByReference: Readonly<Record<string, readonly string[]>>,
): string[] {
  const keys = new Set<string>();
  for (const dl of deadLetters) {
    const key = injected400Completion(dl.body, dl.attributes.ErrorReason, faultsByReference);
    if (key !== undefined) keys.add(key);
  }
  return [...keys].sort();
}

/** Distinct soak children (envelope ids) among the dead letters. */
export function soakChildrenInDlqs(deadLetters: readonly Pick<CollectedDeadLetter, 'body'>[]): number {
  const ids = new Set<string>();
  for (const dl of deadLetters) {
    const envelope = envelopeOf(dl.body);
    if (envelope?.type === SOAK_BATCH_CHILD_TYPE && typeof envelope.id === 'string') ids.add(envelope.id);
  }
  return ids.size;
}

/** The soak batches among batch items, by the batch key of their completion job's data (pure). */
export function foundSoakBatches(
  items: readonly Readonly<Record<string, AttributeValue>>[],
): Record<string, BatchCounters[]> {
  const found: Record<string, BatchCounters[]> = {};
  for (const item of items) {
    if (item.recordType?.S !== 'batch') continue;
    const completion = envelopeOf(item.completionEnvelope?.S ?? '');
    if (completion?.type !== soakBatchJobs.summary.type) continue;
    const key = completion.data?.batchKey;
    if (typeof key !== 'string') continue;
    const counters: BatchCounters = {
      total: Number(item.total?.N ?? Number.NaN),
      succeeded: Number(item.succeeded?.N ?? Number.NaN),
      deadLettered: Number(item.deadLettered?.N ?? Number.NaN),
      completed: item.state?.S === 'completed',
    };
    found[key] = [...(found[key] ?? []), counters];
  }
  return found;
}
