// A job's chain: its parent and children, then every job from the first send to the last
// descendant, each linking to its own page.
/** @import { ConsoleChain, ConsoleChainJob } from './types.ts' */
import { plural, time } from './format.js';
import { href } from './route.js';
import { html } from './vendor/preact-htm.js';

/** @type {Record<string, [cssClass: string, label: string]>} */
const CHAIN_STATE = {
  done: ['ok', 'done'],
  'dead-lettered': ['bad', 'dead-lettered'],
  running: ['warn', 'running'],
  retrying: ['warn', 'retrying'],
  'queued-or-in-flight': ['warn', 'queued or in flight'],
};

/** The page of a job of a chain: by its envelope when its key is the default key, else by its key. */
/** @param {ConsoleChainJob} job */
function chainJobHref(job) {
  return job.id !== undefined
    ? href('/jobs', { type: job.type, source: job.source, id: job.id })
    : href('/jobs', { type: job.type, key: job.key });
}

/** @param {ConsoleChainJob} job */
function chainJobName(job) {
  return job.id ?? job.key ?? job.pk;
}

/** Parent and children of the job asked for, then the whole chain, each linking to its own page. */
/** @param {{ chain: ConsoleChain | null, note: string | undefined, onRefresh: () => void }} props */
export function Chain({ chain, note, onRefresh }) {
  if (!chain)
    return html`<section class="card" data-testid="job-chain"><h3>Chain</h3><p class="note">${note ?? 'not available'}</p></section>`;
  const byPk = new Map(chain.jobs.map((j) => [j.pk, j]));
  const asked = chain.jobs.find((j) => j.asked);
  const parent = asked?.parentPk ? byPk.get(asked.parentPk) : undefined;
  const children = (asked?.childPks ?? []).map((pk) => byPk.get(pk)).filter((j) => j !== undefined);
  /** @param {ConsoleChainJob} j */
  const link = (j) =>
    html`<a href=${chainJobHref(j)} data-chain-link=${j.type}>${j.type} <code>${chainJobName(j)}</code></a>`;
  return html`<section class="card" data-testid="job-chain">
    <h3>
      Chain <small>${plural(chain.jobs.length, 'job')}, from the first send to the last descendant</small>
      <button class="link" data-action="refresh-chain" onClick=${onRefresh}>look again</button>
    </h3>
    <p data-field="parent">Parent: ${parent ? link(parent) : asked?.parentPk ? html`<code>${asked.parentPk}</code> (no record)` : 'none: this job is the root'}</p>
    <p data-field="children">Children: ${children.length === 0 ? 'none' : children.map((c, i) => html`${i > 0 ? ', ' : ''}${link(c)}`)}</p>
    <table class="chain">
      <thead><tr><th>Job</th><th>State</th><th>Attempts</th><th>First run</th><th>Ended</th><th>Where it is now</th></tr></thead>
      <tbody>
        ${chain.jobs.map((j) => {
          const [cls, label] = CHAIN_STATE[j.state] ?? ['warn', j.state];
          return html`<tr data-chain-job=${j.type} data-state=${j.state} class=${j.asked ? 'asked' : ''}>
            <td style=${`padding-left: ${0.5 + j.depth * 1.25}em`}>${j.depth > 0 ? '└ ' : ''}${j.asked ? html`<strong>${j.type} <code>${chainJobName(j)}</code></strong>` : link(j)}</td>
            <td><span class=${cls}>${label}</span></td>
            <td>${j.attempts ?? '–'}</td>
            <td>${time(j.firstRunAt)}</td>
            <td>${time(j.endedAt)}</td>
            <td>${j.deadLetter ? html`<a href=${href('/dead-letters', { queue: j.deadLetter.queueId, message: j.deadLetter.messageId })}>${j.where}</a>` : j.where}${j.outcome && j.state !== 'done' ? html`<br /><span class="sub">${j.outcome}</span>` : null}</td>
          </tr>`;
        })}
      </tbody>
    </table>
    ${chain.batches.map(
      (b) => html`<p data-chain-batch=${b.batchId} data-state=${b.state}>
        Batch <code>${b.batchId}</code>: <span class=${b.state === 'completed' ? 'ok' : b.overdue ? 'bad' : 'warn'}>${b.state}${b.overdue ? ', overdue' : ''}</span>,
        ${b.succeeded + b.deadLettered} of ${plural(b.total, 'child', 'children')} counted
        (${b.succeeded} succeeded, ${b.deadLettered} dead-lettered, ${b.waitingForRedrive} waiting for their redrive, ${b.notCounted} not counted yet);
        policy ${b.policy}, open limit ${b.openLimitSeconds} s, completion job ${b.completionJob ?? 'unknown'}
      </p>`,
    )}
    ${chain.notes.map((n) => html`<p class="note">${n}</p>`)}
  </section>`;
}
