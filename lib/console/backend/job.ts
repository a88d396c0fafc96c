/**
 * The job page (`POST /api/jobs`): a job's idempotency record and steps, its dead letters in any
 * DLQ of the console, and its chain (lib/ops/job-chain.ts, as `sqs-jobs job` prints it): parent,
 * children, the whole chain from the first send to the last descendant.
 */
import { compileFilter } from '../../ops/filters.ts';
import {
  type ChainDeadLetter,
  type ChainDeadLetterQueue,
  type ChainJob,
  type JobChain,
  walkJobChain,
} from '../../ops/job-chain.ts';
import { decodeDefaultJobKey } from '../../runtime/idempotency/keys.ts';
import { type JobLookup, type JobRecordView, lookupJobRecord, lookupKey, readItemOf } from '../jobs.ts';
import type { ConsoleContext } from './context.ts';
import { type FullMessageView, fullMessage } from './dead-letters.ts';
import { ConsoleRequestError, errorText } from './errors.ts';

/** A job of a chain as the page gets it: its dead letter also names the console queue whose DLQ holds it. */
export type ConsoleChainJob = Omit<ChainJob, 'deadLetter'> & {
  readonly deadLetter: (ChainDeadLetter & { readonly queueId: string | undefined }) | undefined;
};

/** A job's chain as the page gets it. */
export type ConsoleChain = Omit<JobChain, 'jobs'> & { readonly jobs: readonly ConsoleChainJob[] };

/** The job page. */
export interface JobView {
  readonly lookup: JobLookup;
  readonly record: JobRecordView | null;
  readonly recordNote: string | undefined;
  readonly deadLetters: readonly {
    readonly queueId: string;
    readonly dlq: string;
    readonly message: FullMessageView;
  }[];
  readonly deadLetterNotes: readonly string[];
  readonly chain: ConsoleChain | null;
  readonly chainNote: string | undefined;
}

/**
 * A job by its type and key (or envelope source + id).
 * @throws {ConsoleRequestError} 400 without a type, or with a lookup that names no key.
 */
export async function jobView(ctx: ConsoleContext, lookup: JobLookup): Promise<JobView> {
  if (lookup.type === '') throw new ConsoleRequestError(400, 'give the job type');
  let key: string;
  try {
    key = lookupKey(lookup);
  } catch (error) {
    throw new ConsoleRequestError(400, errorText(error));
  }
  const { record, recordNote } = await readRecord(ctx, lookup);
  const { deadLetters, deadLetterNotes } = await findDeadLetters(ctx, lookup, key);
  const { chain, chainNote } = await readChain(ctx, lookup.type, key);
  return { lookup, record, recordNote, deadLetters, deadLetterNotes, chain, chainNote };
}

async function readRecord(
  ctx: ConsoleContext,
  lookup: JobLookup,
): Promise<Pick<JobView, 'record' | 'recordNote'>> {
  const { setup } = ctx;
  if (setup.dynamodb === undefined || setup.idempotencyTables.length === 0) {
    return {
      record: null,
      recordNote:
        'no idempotency table is known to this console (pass --idempotency-table or --outputs-file)',
    };
  }
  try {
    const record = await lookupJobRecord(setup.dynamodb, setup.idempotencyTables, lookup, {
      scanSteps: setup.scanSteps ?? setup.mode !== 'aws',
    });
    return { record, recordNote: undefined };
  } catch (error) {
    if (error instanceof RangeError) throw new ConsoleRequestError(400, error.message);
    return { record: null, recordNote: `the idempotency table could not be read: ${errorText(error)}` };
  }
}

/** The job's messages in the console's DLQs, matched by envelope id (and source when known). */
async function findDeadLetters(
  ctx: ConsoleContext,
  lookup: JobLookup,
  key: string,
): Promise<{ deadLetters: JobView['deadLetters'][number][]; deadLetterNotes: string[] }> {
  const decoded = decodeDefaultJobKey(key);
  const id = lookup.id ?? decoded?.id;
  const source = lookup.id !== undefined ? lookup.source : decoded?.source;
  const deadLetters: JobView['deadLetters'][number][] = [];
  const deadLetterNotes: string[] = [];
  if (id === undefined) {
    deadLetterNotes.push('the key is not an envelope source + id: dead letters are matched by envelope id');
    return { deadLetters, deadLetterNotes };
  }
  const matches = compileFilter({ jobIds: [id] });
  for (const queue of ctx.setup.queues) {
    try {
      const { read } = await ctx.dlqs.read(queue, false);
      for (const m of read.messages) {
        if (!matches(m) || m.jobType !== lookup.type) continue;
        if (source !== undefined && source !== '' && m.job?.source !== source) continue;
        deadLetters.push({ queueId: queue.id, dlq: read.queue.name, message: fullMessage(m) });
      }
    } catch (error) {
      deadLetterNotes.push(`${queue.id}: ${errorText(error)}`);
    }
  }
  return { deadLetters, deadLetterNotes };
}

async function readChain(
  ctx: ConsoleContext,
  type: string,
  key: string,
): Promise<Pick<JobView, 'chain' | 'chainNote'>> {
  const { setup } = ctx;
  if (setup.dynamodb === undefined || setup.idempotencyTables.length === 0) {
    return {
      chain: null,
      chainNote: 'the chain is read from the idempotency table: none is known to this console',
    };
  }
  const queueIdOfDlq = new Map<string, string>();
  try {
    const walked = await walkJobChain({
      tables: setup.idempotencyTables,
      readItem: readItemOf(setup.dynamodb),
      start: { type, key },
      deadLetters: () => chainDeadLetters(ctx, queueIdOfDlq),
      now: ctx.now,
    });
    // The page links a dead letter to its DLQ view, which is named by the console's queue id.
    const chain: ConsoleChain = {
      ...walked,
      jobs: walked.jobs.map((j) =>
        j.deadLetter === undefined
          ? { ...j, deadLetter: undefined }
          : { ...j, deadLetter: { ...j.deadLetter, queueId: queueIdOfDlq.get(j.deadLetter.dlq) } },
      ),
    };
    return { chain, chainNote: undefined };
  } catch (error) {
    return { chain: null, chainNote: `the chain could not be read: ${errorText(error)}` };
  }
}

/** Every DLQ of the console as the chain walk reads them (the cached, held-and-released reads). */
async function chainDeadLetters(
  ctx: ConsoleContext,
  queueIdOfDlq: Map<string, string>,
): Promise<ChainDeadLetterQueue[]> {
  const out: ChainDeadLetterQueue[] = [];
  for (const queue of ctx.setup.queues) {
    try {
      const { read } = await ctx.dlqs.read(queue, false);
      queueIdOfDlq.set(read.queue.name, queue.id);
      out.push({
        name: read.queue.name,
        messages: read.messages,
        notRead: read.notRead,
        fifo: read.queue.fifo,
      });
    } catch (error) {
      out.push({ name: `${queue.id} DLQ`, messages: [], notRead: 0, fifo: false, error: errorText(error) });
    }
  }
  return out;
}
