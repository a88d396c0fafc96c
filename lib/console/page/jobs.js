// The jobs page: look a job up by type and key (or envelope source + id); its idempotency
// record, `once` steps, chain and dead letters.
/** @import { ConfigView, FieldEvent, JobView, Route, SubmitEvent } from './types.ts' */
import { lookUpJob, messageOf } from './api.js';
import { location } from './browser.js';
import { Chain } from './chain.js';
import { pretty, time } from './format.js';
import { Evidence } from './message.js';
import { href } from './route.js';
import { html, useEffect, useState } from './vendor/preact-htm.js';

/** Record attributes shown as they are: name, label. @type {[string, string][]} */
const RECORD_FIELDS = [
  ['status', 'Status'],
  ['attempt', 'Attempt'],
  ['redriveCount', 'Redrives'],
  ['lastError', 'Last error'],
  ['lastErrorKind', 'Last error kind'],
  ['messageId', 'SQS message id'],
];
/** Record attributes that are times (epoch ms): name, label. @type {[string, string][]} */
const RECORD_TIMES = [
  ['createdAtMs', 'Started'],
  ['acquiredAtMs', 'Lease taken'],
  ['leaseExpiresAtMs', 'Lease expires'],
  ['endedAtMs', 'Last run ended'],
  ['completedAtMs', 'Completed'],
  ['firstFailureAtMs', 'First failure'],
  ['lastFailureAtMs', 'Last failure'],
  ['interruptedAtMs', 'Interrupted'],
  ['updatedAtMs', 'Last write'],
];

/** @param {{ config: ConfigView, params: Route['params'] }} props `params`: the lookup (type, key, source, id, steps) */
export function JobsPage({ config, params }) {
  const [form, setForm] = useState({
    type: params.type ?? '',
    key: params.key ?? '',
    source: params.source ?? '',
    id: params.id ?? '',
    steps: params.steps ?? '',
  });
  const [data, setData] = useState(/** @type {JobView | null} */ (null));
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);
  /** @param {typeof form} values */
  const lookup = async (values) => {
    setBusy(true);
    try {
      const given = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ''));
      setData(await lookUpJob(given));
      setError(null);
    } catch (e) {
      setError(messageOf(e));
      setData(null);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    const next = {
      type: params.type ?? '',
      key: params.key ?? '',
      source: params.source ?? '',
      id: params.id ?? '',
      steps: params.steps ?? '',
    };
    setForm(next);
    if (next.type && (next.key || next.id)) lookup(next);
  }, [params.type, params.key, params.source, params.id, params.steps]);
  /** @param {keyof typeof form} name */
  const set = (name) => (/** @type {FieldEvent} */ e) => setForm({ ...form, [name]: e.currentTarget.value });
  return html`<div>
    <section class="card">
      <h2>Look up a job</h2>
      <form
        class="lookup"
        onSubmit=${(/** @type {SubmitEvent} */ e) => {
          e.preventDefault();
          location.hash = href('/jobs', form);
        }}
      >
        <label>Job type <input name="type" value=${form.type} onInput=${set('type')} placeholder="payments.capture" required /></label>
        <label>Envelope source <input name="source" value=${form.source} onInput=${set('source')} placeholder="/services/checkout" /></label>
        <label>Envelope id <input name="id" value=${form.id} onInput=${set('id')} /></label>
        <label>or job key <input name="key" value=${form.key} onInput=${set('key')} placeholder="custom idempotency key" /></label>
        <label>Steps <input name="steps" value=${form.steps} onInput=${set('steps')} placeholder=${config.scanSteps ? 'found by themselves here' : 'charge, email'} /></label>
        <button type="submit" disabled=${busy}>Look up</button>
      </form>
      <p class="note">
        A job is its type and key; the default key is the envelope's source and id. Tables: ${config.idempotencyTables.join(', ') || 'none known'}.
      </p>
    </section>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${
      data
        ? html`<${JobRecord} view=${data.record} note=${data.recordNote} />
          <${Chain} chain=${data.chain} note=${data.chainNote} onRefresh=${() => lookup(form)} />
          <${JobDeadLetters} view=${data} />`
        : null
    }
  </div>`;
}

/**
 * The job's idempotency record (status, times, result) and its `once` steps.
 * @param {{ view: JobView['record'], note: string | undefined }} props
 */
function JobRecord({ view, note }) {
  const record = view?.record;
  return html`<section class="card" data-testid="job-record">
    <h3>Idempotency record ${view ? html`<small><code>${view.table}</code> pk <code>${JSON.stringify(view.pk)}</code></small>` : null}</h3>
    ${note ? html`<p class="note">${note}</p>` : null}
    ${
      view && !record
        ? html`<p class="empty" data-field="status">No record: this job never started (or its record expired by TTL).</p>`
        : null
    }
    ${
      record
        ? html`<div>
            <table class="evidence">
              ${RECORD_FIELDS.filter(([k]) => record[k] !== undefined).map(
                ([k, label]) =>
                  html`<tr><th>${label}</th><td data-field=${k}>${k === 'status' ? html`<span class=${record.status === 'COMPLETED' ? 'ok' : record.status === 'FAILED' ? 'bad' : 'warn'}>${record.status}</span>` : String(record[k])}</td></tr>`,
              )}
              ${RECORD_TIMES.filter(([k]) => typeof record[k] === 'number').map(
                ([k, label]) =>
                  html`<tr><th>${label}</th><td data-field=${k}>${time(record[k])}${k === 'leaseExpiresAtMs' && record.status === 'IN_PROGRESS' && /** @type {number} */ (record[k]) < Date.now() ? ' (expired)' : ''}</td></tr>`,
              )}
              ${record.leaseToken ? html`<tr><th>Lease token</th><td><code>${String(record.leaseToken).slice(0, 8)}…</code></td></tr>` : null}
            </table>
            ${
              record.status === 'COMPLETED'
                ? record.resultStored === false
                  ? html`<p class="note">Result not stored (${record.resultOmittedReason}, ${record.resultBytes} bytes): a duplicate gets this marker, not the result.</p>`
                  : html`<h4>Result</h4><pre class="body">${record.result === undefined ? '(none: the job returned nothing)' : pretty(/** @type {string} */ (record.result))}</pre>`
                : null
            }
            <details><summary>All attributes</summary><pre>${JSON.stringify(record, null, 2)}</pre></details>
          </div>`
        : null
    }
    ${
      view
        ? html`<h4>once steps</h4>
            <p class="note">${view.stepsNote}${view.stepsMissing.length ? `; no record for ${view.stepsMissing.join(', ')}` : ''}</p>
            ${
              view.steps.length === 0
                ? html`<p class="empty">No step records.</p>`
                : html`<table>
                    <thead><tr><th>Step</th><th>Done at</th><th>Attempt</th><th>Value</th></tr></thead>
                    <tbody>
                      ${view.steps.map(
                        (s) => html`<tr data-step=${s.name}>
                          <td>${s.name}</td>
                          <td>${time(s.record.completedAtMs)}</td>
                          <td>${s.record.attempt}</td>
                          <td><code>${s.record.valueStored === false ? `(not stored: ${s.record.valueOmittedReason})` : (s.record.value ?? '(none)')}</code></td>
                        </tr>`,
                      )}
                    </tbody>
                  </table>`
            }`
        : null
    }
  </section>`;
}

/**
 * The job's messages in the console's dead-letter queues.
 * @param {{ view: JobView }} props
 */
function JobDeadLetters({ view }) {
  return html`<section class="card" data-testid="job-dead-letters">
    <h3>In a dead-letter queue</h3>
    ${view.deadLetterNotes.map((n) => html`<p class="note">${n}</p>`)}
    ${
      view.deadLetters.length === 0
        ? html`<p class="empty">Not in any dead-letter queue of this console.</p>`
        : view.deadLetters.map(
            (d) => html`<div class="dead-letter">
              <p><a href=${href('/dead-letters', { queue: d.queueId, message: d.message.messageId })}>${d.dlq}</a></p>
              <${Evidence} message=${d.message} />
            </div>`,
          )
    }
  </section>`;
}
