/**
 * `sqs-jobs schedules cancel` and the console's Cancel button: a job sent for later cancelled by
 * its identity through `JobClient.cancel`'s own path (lib/client/scheduled-jobs.ts), its state item
 * found first (by key, or a Scan for its id) so the operator needs only the job id.
 */
import { ScheduledJobs } from '../client/scheduled-jobs.ts';
import type { CancelResult } from '../client/scheduling.ts';
import { OpsError } from './errors.ts';
import { ambiguousJobId, findScheduledJob, getSchedule, type SchedulesSource } from './schedule-reads.ts';
import { tableReadError } from './table-errors.ts';

/** What {@link cancelScheduledJob} did: `JobClient.cancel`'s answer. */
export type CancelScheduledJobResult = CancelResult & { readonly source?: string; readonly type?: string };

/**
 * Cancels a job sent for later by its identity, through `JobClient.cancel`'s path (a conditional
 * write of its state item to `cancelled`, then the delete of its one-time schedule): a cancelled
 * job never runs, whether its schedule fired or not.
 * @param jobId the job's envelope id; `options.source` its source (else found by a Scan for the id).
 * @throws {OpsError} without a table, or when the table or Scheduler cannot be reached.
 */
export async function cancelScheduledJob(
  source: SchedulesSource,
  jobId: string,
  options: { readonly source?: string; readonly nowMs?: () => number } = {},
): Promise<CancelScheduledJobResult> {
  const { dynamodb, table } = source;
  if (dynamodb === undefined || table === undefined)
    throw new OpsError(
      "cancel needs the idempotency table that keeps the job's state: give --idempotency-table (stack output IdempotencyTableName) or --local",
      { code: 'TableReadFailed' },
    );
  const now = options.nowMs ?? Date.now;
  const found = await findScheduledJob(source, jobId, { ...options, nowMs: now() });
  const state = found.state;
  if (state === undefined) return { status: 'not-found', id: jobId, queue: '' };
  if (found.sources.length > 1) throw ambiguousJobId(jobId, found.sources);
  // The schedule group holding its schedule: the JobClient knows it from its environment; here it is found.
  let groupName: string | undefined;
  if (state.via === 'schedule' && state.scheduleName !== undefined && source.scheduler !== undefined) {
    for (const group of source.groups) {
      const schedule = await getSchedule(source.scheduler, state.scheduleName, group).catch(() => undefined);
      if (schedule !== undefined) {
        groupName = group;
        break;
      }
    }
  }
  const jobs = new ScheduledJobs({
    source: state.source,
    queueUrls: {},
    scheduling: {
      idempotencyTableName: table,
      ...(groupName === undefined ? {} : { queues: { [state.queue]: { groupName, roleArn: '' } } }),
    },
    scheduler: source.scheduler,
    dynamodb,
    now,
    sendNow: async () => ({ sent: [], failed: [] }),
  });
  try {
    const result = await jobs.cancel({ queue: state.queue, id: state.jobId, source: state.source });
    return { ...result, source: state.source, type: state.type };
  } catch (error) {
    throw tableReadError(error, table, source.dynamodbEndpoint);
  }
}
