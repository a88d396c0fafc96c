/**
 * Text and JSON of a job's story (`sqs-jobs job`): the chain as a tree, root first, one block per
 * job (state and where it is, attempts and times, outcome), then the DLQs read and the notes.
 */

import { type ChainJob, describeJobRef, type JobChain } from './job-chain.ts';
import { terminalLines } from './terminal-text.ts';

const STATE_LABEL: Record<ChainJob['state'], string> = {
  done: 'done',
  'dead-lettered': 'DEAD-LETTERED',
  running: 'running',
  retrying: 'retrying',
  'queued-or-in-flight': 'queued or in flight',
};

/** How a job of the chain is named in text: `id <id> (source <source>)`, else its key. */
function nameOf(job: ChainJob): string {
  if (job.id !== undefined) return `id ${job.id} (source ${job.source})`;
  if (job.key !== undefined) return `key ${job.key.replace(/\n/g, ' ⏎ ')}`;
  return `record ${job.pk}`;
}

/** The chain as text. */
export function renderJobChain(chain: JobChain): string {
  const lines: string[] = [];
  const counts = new Map<string, number>();
  for (const job of chain.jobs) counts.set(job.state, (counts.get(job.state) ?? 0) + 1);
  const summary = [...counts]
    .map(([state, n]) => `${n} ${STATE_LABEL[state as ChainJob['state']]}`)
    .join(', ');
  lines.push(
    `chain of ${describeJobRef(chain.asked)}: ${chain.jobs.length} job${chain.jobs.length === 1 ? '' : 's'} (${summary}), from the first send to the last descendant`,
    '',
  );
  for (const job of chain.jobs) {
    const indent = '   '.repeat(job.depth);
    const branch = job.depth === 0 ? '' : '└─ ';
    const pad = `${indent}${job.depth === 0 ? '' : '   '}   `;
    lines.push(`${indent}${branch}${job.type}  ${nameOf(job)}${job.asked ? '   ← asked' : ''}`);
    lines.push(`${pad}${STATE_LABEL[job.state]}: ${job.where}`);
    const facts: string[] = [];
    if (job.attempts !== undefined) facts.push(`attempts ${job.attempts}`);
    if (job.redrives !== undefined) facts.push(`redrives ${job.redrives}`);
    if (job.firstRunAt !== undefined) facts.push(`first run ${job.firstRunAt}`);
    if (job.lastRunAt !== undefined && job.lastRunAt !== job.firstRunAt)
      facts.push(`last run ${job.lastRunAt}`);
    if (job.endedAt !== undefined) facts.push(`ended ${job.endedAt}`);
    if (job.status === undefined) facts.push('no record');
    if (facts.length > 0) lines.push(`${pad}${facts.join(', ')}`);
    if (job.outcome !== undefined) {
      lines.push(
        `${pad}${job.status === 'COMPLETED' ? 'result' : 'error'}: ${job.outcome.replace(/\s*\n\s*/g, ' ⏎ ')}`,
      );
    }
  }
  for (const batch of chain.batches) {
    const states = [
      `${batch.succeeded} succeeded`,
      `${batch.deadLettered} dead-lettered`,
      `${batch.waitingForRedrive} waiting for their redrive`,
      `${batch.notCounted} not counted yet`,
    ].join(', ');
    lines.push(
      '',
      `batch ${batch.batchId}${batch.startedBy === '' ? '' : ` started by ${describeJobRef(batch.startedBy)}`}: ${batch.state}${batch.overdue ? ', OVERDUE' : ''}`,
      `   ${batch.succeeded + batch.deadLettered} of ${batch.total} children counted (${states}); policy ${batch.policy}`,
      `   started ${batch.createdAt}, open limit ${batch.openLimitSeconds} s; completion job ${batch.completionJob ?? '(unknown)'}`,
    );
  }
  if (chain.deadLetterQueues.length > 0) {
    lines.push(
      '',
      `dead-letter queues read (held while read, then visible again; nothing consumed): ${chain.deadLetterQueues
        .map((d) => `${d.name} (${d.read} message${d.read === 1 ? '' : 's'})`)
        .join(', ')}`,
    );
  }
  if (chain.notes.length > 0) lines.push('', ...chain.notes.map((n) => `note: ${n}`));
  return terminalLines(lines);
}

/** The chain as JSON (the same object, for scripts). */
export function jobChainJson(chain: JobChain): unknown {
  return chain;
}
