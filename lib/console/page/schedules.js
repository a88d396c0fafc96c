// The schedules page (`GET /api/schedules`): pending jobs sent for later (when, which job, for
// whom) with a Cancel button each, recurring schedules with their next firings in their own time
// zone and their recent firings, with a Fire now button each. Buttons are hidden on a read-only
// console; both ask before acting. Read when the page opens and on Refresh (each read Scans the
// idempotency table).
/** @import { ConfigView } from './types.ts' */
import { cancelScheduledJob, fireSchedule, getSchedules, messageOf } from './api.js';
import { browser } from './browser.js';
import { time } from './format.js';
import { useRefreshedView } from './refreshed-view.js';
import { html, useState } from './vendor/preact-htm.js';

/**
 * A UTC instant as `2026-12-01 22:00:00 UTC`.
 * @param {string} iso
 */
function utc(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** @param {{ config: ConfigView }} props */
export function SchedulesPage({ config }) {
  const { view, error, busy, load, setBusy, setError } = useRefreshedView(getSchedules);
  const [message, setMessage] = useState(/** @type {string | null} */ (null));

  /**
   * @param {string} jobId
   * @param {string} source
   */
  const cancel = async (jobId, source) => {
    if (!browser.confirm(`Cancel job ${jobId}? It will not run.`)) return;
    setBusy(true);
    try {
      const result = await cancelScheduledJob(jobId, source);
      setMessage(
        result.status === 'cancelled'
          ? `Cancelled ${jobId}: it will not run.`
          : result.status === 'already-started'
            ? `Too late: ${jobId} has already started.`
            : result.status === 'already-cancelled'
              ? `${jobId} was already cancelled.`
              : `No job sent for later with id ${jobId}.`,
      );
      setError(null);
    } catch (e) {
      setError(messageOf(e));
    }
    load();
  };

  /**
   * @param {string} name
   * @param {string} group
   */
  const fire = async (name, group) => {
    if (!browser.confirm(`Fire ${name} now? Its job runs now, besides its scheduled firings.`)) return;
    setBusy(true);
    try {
      const fired = await fireSchedule(name, group);
      setMessage(
        `Fired ${name}: sent job ${fired.jobId ?? '?'} (its own scheduled time: never the real firing's).`,
      );
      setError(null);
    } catch (e) {
      setError(messageOf(e));
    }
    load();
  };

  if (!view && !error) return html`<p class="loading">Reading the schedules…</p>`;
  const canAct = !config.readOnly && view?.readOnly !== true;
  return html`<div>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${message ? html`<p class="ok" role="status" data-testid="schedules-message">${message}</p>` : null}
    ${view && !view.available ? html`<p class="note">${view.note}</p>` : null}
    ${
      view?.available
        ? html`
          <section class="card" data-testid="pending-jobs">
            <h2>
              Jobs sent for later <small>${view.pending.length} pending, read ${time(view.at)}</small>
              <button type="button" onClick=${load} disabled=${busy} data-testid="schedules-refresh">Refresh</button>
            </h2>
            ${view.pending.length === 0 ? html`<p class="note">No job is waiting for its time.</p>` : null}
            ${
              view.pending.length > 0
                ? html`<table>
                    <thead><tr><th>When</th><th>Job</th><th>For</th><th>Id</th><th>How</th>${canAct ? html`<th></th>` : null}</tr></thead>
                    <tbody>
                      ${view.pending.map(
                        (p) => html`<tr data-job=${p.jobId}>
                          <td>${time(p.runAt)}<div class="sub">${utc(p.runAt)}</div></td>
                          <td>${p.type}<div class="sub">queue ${p.queue}</div></td>
                          <td>${p.partitionKey ?? '–'}</td>
                          <td>${p.jobId}<div class="sub">${p.source}</div></td>
                          <td>${p.via === 'schedule' ? 'schedule' : 'SQS delay'}${p.generation !== undefined && p.generation > 1 ? html`<div class="sub">rescheduled (${p.generation})</div>` : null}</td>
                          ${
                            canAct
                              ? html`<td><button type="button" onClick=${() => cancel(p.jobId, p.source)} disabled=${busy} data-action="cancel">Cancel</button></td>`
                              : null
                          }
                        </tr>`,
                      )}
                    </tbody>
                  </table>`
                : null
            }
          </section>
          <section class="card" data-testid="recurring">
            <h2>Recurring schedules <small>group${view.groups.length === 1 ? '' : 's'} ${view.groups.join(', ') || '(none)'}</small></h2>
            ${view.recurring.length === 0 ? html`<p class="note">No recurring schedule.</p>` : null}
            ${view.recurring.map(
              (s) => html`<div class="schedule" data-schedule=${s.name}>
                <h3>
                  ${s.name} <small>${s.expression} in ${s.timeZone}, ${s.state}${s.jobType ? `, job ${s.jobType}` : ''}${s.queueName ? ` → ${s.queueName}` : ''}</small>
                  ${canAct ? html`<button type="button" onClick=${() => fire(s.name, s.groupName)} disabled=${busy} data-action="fire">Fire now</button>` : null}
                </h3>
                <p data-field="next">
                  Next (${s.timeZone}):
                  ${s.nextFiringsError ? ` cannot tell (${s.nextFiringsError})` : s.nextFirings.length === 0 ? ' none' : s.nextFirings.map((f) => html` <span class="badge" title=${utc(f.at)}>${f.local.replace('T', ' ')}</span>`)}
                </p>
                ${
                  s.firings.length > 0
                    ? html`<table class="firings">
                        <thead><tr><th>Firing</th><th>Where it went</th><th>Attempts</th><th>Ended</th></tr></thead>
                        <tbody>
                          ${s.firings.map(
                            (f) => html`<tr data-firing=${f.jobId}>
                              <td>${f.scheduledTime}${f.manual ? html` <span class="badge">fired by an operator</span>` : null}</td>
                              <td class=${f.status === 'COMPLETED' ? 'ok' : f.status === 'FAILED' ? 'bad' : 'warn'}>${f.outcome}</td>
                              <td>${f.attempts}</td>
                              <td>${time(f.endedAt)}</td>
                            </tr>`,
                          )}
                        </tbody>
                      </table>`
                    : html`<p class="note">No firing has reached a worker yet.</p>`
                }
              </div>`,
            )}
          </section>
          ${view.notes.length > 0 ? html`<section class="card"><ul class="notes">${view.notes.map((n) => html`<li>${n}</li>`)}</ul></section>` : null}`
        : null
    }
  </div>`;
}
