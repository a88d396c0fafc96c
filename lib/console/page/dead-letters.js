// The dead-letters page: a queue's DLQ grouped by cause, its messages, one message opened, and
// the way into a redrive (by group or by filter) unless the console is read-only.
/** @import { ConfigView, DeadLettersView, FieldEvent, FilterFields, Route, SubmitEvent } from './types.ts' */
import { messageOf, readDeadLetters } from './api.js';
import { plural, time } from './format.js';
import { MessagePanel } from './message.js';
import { RedrivePanel } from './redrive.js';
import { href } from './route.js';
import { html, useCallback, useEffect, useState } from './vendor/preact-htm.js';

/** @param {{ config: ConfigView, params: Route['params'] }} props `params.queue`, `params.message` */
export function DeadLettersPage({ config, params }) {
  const queueId = params.queue ?? config.queues[0]?.id;
  const [data, setData] = useState(/** @type {DeadLettersView | null} */ (null));
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [loading, setLoading] = useState(false);
  const [redrive, setRedrive] = useState(/** @type {{ filter: FilterFields, key: number } | null} */ (null));

  const load = useCallback(
    /** @param {boolean} refresh */
    async (refresh) => {
      if (!queueId) return;
      setLoading(true);
      try {
        setData(await readDeadLetters(queueId, refresh === true));
        setError(null);
      } catch (e) {
        setError(messageOf(e));
      } finally {
        setLoading(false);
      }
    },
    [queueId],
  );
  useEffect(() => {
    setData(null);
    setRedrive(null);
    load(false);
  }, [queueId]);

  return html`<div>
    <nav class="tabs">
      ${config.queues.map(
        (q) =>
          html`<a href=${href('/dead-letters', { queue: q.id })} class=${q.id === queueId ? 'active' : ''} data-dlq-tab=${q.id}>${q.id}</a>`,
      )}
    </nav>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${!data ? html`<p class="loading">Reading the dead-letter queue (nothing is deleted)…</p>` : null}
    ${
      data
        ? html`<${DeadLetterGroups}
            data=${data}
            readOnly=${config.readOnly}
            loading=${loading}
            onReload=${() => load(true)}
            onRedrive=${(/** @type {FilterFields} */ filter) => setRedrive({ filter, key: Math.random() })}
          />`
        : null
    }
    ${redrive && !config.readOnly ? html`<${RedrivePanel} key=${redrive.key} queueId=${queueId} filter=${redrive.filter} onDone=${() => load(true)} onClose=${() => setRedrive(null)} />` : null}
    ${params.message && data ? html`<${MessagePanel} queueId=${queueId} messageId=${params.message} />` : null}
    ${data && data.messages.length > 0 ? html`<${MessageList} data=${data} />` : null}
  </div>`;
}

/**
 * The DLQ's messages grouped by cause, each group with an example and (unless read-only) a redrive.
 * @param {{
 *   data: DeadLettersView,
 *   readOnly: boolean,
 *   loading: boolean,
 *   onReload: () => void,
 *   onRedrive: (filter: FilterFields) => void,
 * }} props
 */
function DeadLetterGroups({ data, readOnly, loading, onReload, onRedrive }) {
  return html`<section class="card">
    <h2>
      Dead letters of ${data.queue.id} <small>${data.dlq.name}${data.dlq.fifo ? ' (FIFO)' : ''}</small>
      <button onClick=${onReload} disabled=${loading} data-action="reload">${loading ? 'Reading…' : 'Read again'}</button>
    </h2>
    <p class="summary" data-testid="dlq-summary">
      ${plural(data.total, 'message')} read at ${time(data.readAt)}, in ${plural(data.groups.length, 'group')} by cause;
      nothing deleted, every message visible again.
    </p>
    ${data.notes.map((n) => html`<p class="note">${n}</p>`)}
    ${
      data.groups.length === 0
        ? html`<p class="empty">No dead letters: every job of this queue completed or is still being worked on.</p>`
        : html`<table class="groups">
            <thead>
              <tr>
                <th>Cause</th><th>Job type</th><th>Count</th><th>First failure</th><th>Last failure</th><th>Attempts</th><th>Example</th>
                ${readOnly ? null : html`<th></th>`}
              </tr>
            </thead>
            <tbody>
              ${data.groups.map(
                (g) => html`<tr data-group=${g.reason}>
                  <td>
                    <strong>${g.reason}</strong>
                    ${g.reason === 'no-evidence' ? html`<div class="sub">moved by SQS after maxReceiveCount receives (crash, timeout, throttling)</div>` : null}
                    ${g.errorMessages.slice(0, 2).map((m) => html`<div class="sub message">${m}</div>`)}
                  </td>
                  <td>${g.jobType}</td>
                  <td data-field="count">${g.count}</td>
                  <td>${time(g.firstFailureAt ?? g.oldestSentAt)}</td>
                  <td>${time(g.lastFailureAt ?? g.newestSentAt)}</td>
                  <td>${g.attempts ? (g.attempts.min === g.attempts.max ? g.attempts.min : `${g.attempts.min}–${g.attempts.max}`) : '–'}</td>
                  <td><a href=${href('/dead-letters', { queue: data.queue.id, message: g.sample.messageId })}>${g.sample.jobId ?? g.sample.messageId.slice(0, 8)}</a></td>
                  ${
                    readOnly
                      ? null
                      : html`<td><button data-action="redrive-group" onClick=${() => onRedrive({ reasons: [g.reason], jobTypes: [g.jobType] })}>Redrive…</button></td>`
                  }
                </tr>`,
              )}
            </tbody>
          </table>`
    }
    ${readOnly ? html`<p class="note">Read-only console: redrive is off.</p>` : html`<${FilterForm} onRedrive=${onRedrive} />`}
  </section>`;
}

/**
 * The messages read, each a link to its evidence.
 * @param {{ data: DeadLettersView }} props
 */
function MessageList({ data }) {
  return html`<section class="card">
    <h3>Messages <small>${data.messages.length} listed</small></h3>
    <table class="messages">
      <thead><tr><th>Job</th><th>Type</th><th>Cause</th><th>Error</th><th>In DLQ since</th></tr></thead>
      <tbody>
        ${data.messages.map(
          (m) => html`<tr>
            <td><a href=${href('/dead-letters', { queue: data.queue.id, message: m.messageId })}>${m.jobId ?? `(message ${m.messageId.slice(0, 8)})`}</a></td>
            <td>${m.jobType}</td>
            <td>${m.reason}</td>
            <td class="message">${m.errorMessage ?? ''}</td>
            <td>${time(m.sentAt)}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

/** @param {{ onRedrive: (filter: FilterFields) => void }} props */
function FilterForm({ onRedrive }) {
  const [open, setOpen] = useState(false);
  const [fields, setFields] = useState({ reasons: '', jobTypes: '', errorNames: '', jobIds: '' });
  if (!open)
    return html`<p><button class="link" onClick=${() => setOpen(true)} data-action="open-filter">Redrive by filter…</button></p>`;
  /** @param {keyof typeof fields} name */
  const set = (name) => (/** @type {FieldEvent} */ e) =>
    setFields({ ...fields, [name]: e.currentTarget.value });
  /** @param {string} text */
  const split = (text) =>
    text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  return html`<form
    class="filter"
    onSubmit=${(/** @type {SubmitEvent} */ e) => {
      e.preventDefault();
      onRedrive({
        reasons: split(fields.reasons),
        jobTypes: split(fields.jobTypes),
        errorNames: split(fields.errorNames),
        jobIds: split(fields.jobIds),
      });
    }}
  >
    <p class="note">Patterns are exact values or use * as a wildcard; several are separated by commas. Empty fields select everything.</p>
    <label>Cause <input value=${fields.reasons} onInput=${set('reasons')} placeholder="HTTP 4*" /></label>
    <label>Job type <input value=${fields.jobTypes} onInput=${set('jobTypes')} placeholder="payments.*" /></label>
    <label>Error name <input value=${fields.errorNames} onInput=${set('errorNames')} /></label>
    <label>Job id <input value=${fields.jobIds} onInput=${set('jobIds')} /></label>
    <button type="submit">Dry run</button>
  </form>`;
}
