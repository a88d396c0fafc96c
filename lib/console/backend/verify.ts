/**
 * What came back of a redrive (`POST /api/redrives/:id/verify`): the DLQ is read again (nothing
 * deleted) and the redriven jobs found in it are listed (`verifyRedrive` of sqs-jobs/ops); each
 * redriven job's idempotency status is read too, when the table is known.
 */
import { verifyRedrive } from '../../ops/redrive/index.ts';
import { lookupJobRecord } from '../jobs.ts';
import type { ConsoleContext } from './context.ts';
import type { RedriveRecord } from './redrive.ts';

/** Jobs of a redrive whose idempotency status is read, at most. */
const STATUS_READS = 50;

/** `source` and `id` of a redriven item's job key (`["<source>","<id>"]`), when it has one. */
function identityOfJobKey(jobKey: string): { source: string; id: string } | undefined {
  if (!jobKey.startsWith('[')) return undefined;
  try {
    const [source, id] = JSON.parse(jobKey) as [unknown, unknown];
    return typeof source === 'string' && typeof id === 'string' ? { source, id } : undefined;
  } catch {
    return undefined;
  }
}

/** The idempotency status of a redriven job (`null`: unknown, no table, or not readable). */
async function statusOf(
  ctx: ConsoleContext,
  jobType: string,
  identity: { source: string; id: string } | undefined,
): Promise<string | null> {
  const { dynamodb, idempotencyTables } = ctx.setup;
  if (identity === undefined || dynamodb === undefined || idempotencyTables.length === 0) return null;
  try {
    const view = await lookupJobRecord(
      dynamodb,
      idempotencyTables,
      { type: jobType, source: identity.source, id: identity.id },
      { scanSteps: false },
    );
    return typeof view.record?.status === 'string' ? view.record.status : null;
  } catch {
    return null;
  }
}

/** Checks a redrive of this console. */
export async function verifyView(ctx: ConsoleContext, redrive: RedriveRecord) {
  const queue = ctx.queue(redrive.queueId);
  const result = await ctx.dlqs.exclusive(redrive.dlqUrl, () =>
    verifyRedrive({
      sqs: ctx.setup.sqs,
      dlqUrl: redrive.dlqUrl,
      targetUrl: queue.url,
      redriven: redrive.redriven,
      exclude: redrive.seen,
      waitTimeSeconds: ctx.dlqs.waitTimeSeconds,
      now: ctx.now,
    }),
  );
  const jobs: { jobId: string | undefined; jobType: string; status: string | null; source?: string }[] = [];
  for (const item of redrive.redriven.slice(0, STATUS_READS)) {
    const identity = identityOfJobKey(item.jobKey);
    jobs.push({
      jobId: item.jobId,
      jobType: item.jobType,
      status: await statusOf(ctx, item.jobType, identity),
      ...(identity ? { source: identity.source } : {}),
    });
  }
  return {
    redriveId: redrive.id,
    checkedAt: new Date(ctx.now()).toISOString(),
    redrivenJobs: result.redrivenJobs,
    cameBack: result.cameBack.map((c) => ({
      jobId: c.redriven.jobId,
      jobType: c.redriven.jobType,
      messageId: c.messageId,
      matchedBy: c.matchedBy,
      reason: c.reason,
      errorName: c.errorName,
      errorMessage: c.errorMessage,
      sentAt: c.sentAt,
    })),
    unverified: result.unverified.map((u) => ({
      jobId: u.redriven.jobId,
      jobType: u.redriven.jobType,
      messageGroupId: u.messageGroupId,
    })),
    read: result.read,
    notRead: result.notRead,
    targetPending: result.targetPending,
    // Jobs parked after the redrive read their group, left first of it: named with the command
    // that moves them (lib/ops/redrive/stranded-parks.ts), as `sqs-jobs dlq redrive --verify-seconds` does.
    strandedParked: {
      left: result.strandedParked.left.map((l) => ({
        jobId: l.jobId,
        jobType: l.jobType,
        messageId: l.messageId,
        messageGroupId: l.messageGroupId,
      })),
      command: result.strandedParked.command,
    },
    jobs,
  };
}

/** What came back of a redrive, as the page shows it. */
export type VerifyView = Awaited<ReturnType<typeof verifyView>>;
