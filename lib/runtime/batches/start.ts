/**
 * `ctx.startBatch` inside a job: the call only checks the spec and fixes the batch id (derived from
 * the job's identity and the call's position, so a re-run starts the same batch); the batch is
 * started after `run` succeeded, before the job's lease is completed, as `ctx.enqueue`'s children
 * are (children.ts). A start that fails fails the run (transient: the re-run starts the same batch
 * and sends no second child; a refused spec: permanent).
 */
import { createHash } from 'node:crypto';
import type { BatchSpec } from '../../client/batch-start.ts';
import { JobClientError } from '../../client/job-client-error.ts';
import { batchChildId, batchCompletionId, batchIdOf, batchSettingsProblems } from '../../core/batch.ts';
import { derivedTraceId } from '../../core/envelope.ts';
import { type ChildSender, childLineageOptions, type ParentIdentity } from '../children.ts';
import { ChildRejectedError } from '../worker-errors.ts';

/**
 * What `ctx.startBatch` takes: a {@link BatchSpec} without `id` (derived from the job). A variable
 * annotated `JobBatchSpec` checks no child's data against its job: build its entries with
 * `batchChild` / `batchCompletion`, or write the spec inline in the call.
 */
export type JobBatchSpec<
  Children extends readonly unknown[] = readonly unknown[],
  CompletionData = unknown,
> = Omit<BatchSpec<Children, CompletionData>, 'id'>;

/** A batch a run asked for, started after the run. */
export interface BatchRequest {
  readonly batchId: string;
  readonly spec: JobBatchSpec;
}

/**
 * Checks a `ctx.startBatch` spec and gives the batch its id.
 * @throws {ChildRejectedError} (permanent: the job is dead-lettered) naming every problem, or when
 *   the worker keeps no batches (`tableName` undefined).
 */
export function requestBatch(
  parent: ParentIdentity,
  n: number,
  spec: JobBatchSpec,
  tableName: string | undefined,
): BatchRequest {
  if (tableName === undefined) {
    throw new ChildRejectedError(
      "ctx.startBatch needs the worker's DynamoDB idempotency store (its default, on the table JOBS_IDEMPOTENCY_TABLE that JobQueue sets): batches are counted there, in DynamoDB transactions. This worker has idempotency off or another store (the test kit's MemoryIdempotencyStore keeps no batches): in a unit test, run the starting job with runJob (sqs-jobs/testing), which checks its batches as the worker does; to run whole batches, use the worker on dynalite (npx sqs-jobs local)",
    );
  }
  const problems =
    typeof spec === 'object' && spec !== null
      ? batchSettingsProblems(spec)
      : [
          'startBatch takes { children: [...], completion: { job, data }, onChildDeadLettered?, openLimitSeconds? }',
        ];
  if (typeof spec === 'object' && spec !== null && 'id' in spec) {
    problems.push(
      'id is for JobClient.startBatch: inside a job the batch id derives from the job (a re-run starts the same batch)',
    );
  }
  if (problems.length > 0) throw new ChildRejectedError(`ctx.startBatch refused: ${problems.join('; ')}`);
  return { batchId: batchIdOf(parent, n), spec };
}

/**
 * Starts the batches a run asked for, in order.
 * @throws {ChildRejectedError} when a batch is refused (its spec, a child's data, a queue), or the
 *   worker's child sender cannot start batches; other errors as they come (transient: the re-run
 *   starts them again, each under the same id).
 */
export async function startRequestedBatches(
  sender: ChildSender,
  requests: readonly BatchRequest[],
  parent: ParentIdentity,
  tableName: string,
  now: number,
): Promise<void> {
  if (sender.startBatch === undefined) {
    throw new ChildRejectedError(
      "ctx.startBatch needs a child sender that starts batches (the worker's default one does)",
    );
  }
  let traceId: string | undefined;
  const derivedTrace = (): string => {
    traceId ??= derivedTraceId(parent);
    return traceId;
  };
  for (const { batchId, spec } of requests) {
    const spanOf = (id: string): string => createHash('sha256').update(id).digest('hex').slice(0, 16);
    try {
      await sender.startBatch(
        spec,
        {
          batchId,
          source: sender.source ?? parent.source,
          now,
          lineageOf: (index) => {
            const id = index === 'completion' ? batchCompletionId(batchId) : batchChildId(batchId, index);
            const {
              parent: link,
              correlationId,
              traceparent,
              tracestate,
              awsTraceHeader,
            } = childLineageOptions(parent, spanOf(id), derivedTrace);
            return {
              ...(link === undefined ? {} : { parent: link }),
              ...(correlationId === undefined ? {} : { correlationId }),
              ...(traceparent === undefined ? {} : { traceparent }),
              ...(tracestate === undefined ? {} : { tracestate }),
              ...(awsTraceHeader === undefined ? {} : { awsTraceHeader }),
            };
          },
          ...(parent.partitionKey === undefined ? {} : { partitionKey: parent.partitionKey }),
          ...(parent.job === undefined ? {} : { parentJob: parent.job }),
        },
        tableName,
      );
    } catch (error) {
      if (error instanceof JobClientError && error.senderFault) {
        throw new ChildRejectedError(`batch ${batchId} refused: ${error.message}`, { cause: error });
      }
      throw error;
    }
  }
}
