// The queues page: each queue's numbers (refreshed every sample), the depth and completions
// charts over the last hour, alarm states when the console can read them, and the flow-control
// limits (limits.js).
/** @import { ConfigView, QueuesView } from './types.ts' */
/** @typedef {QueuesView['history'][number]} QueueSample */
/** @import { ChartSeries } from './chart.js' */
import { getQueues, messageOf } from './api.js';
import { Chart, COLORS } from './chart.js';
import { age, time } from './format.js';
import { LimitsPanel } from './limits.js';
import { href } from './route.js';
import { html, useEffect, useRef, useState } from './vendor/preact-htm.js';

/**
 * Completions per minute between consecutive samples, per queue (`null` where a count is missing).
 * @param {QueuesView['history']} history
 * @param {readonly string[]} ids
 * @returns {(number | null)[][]} the sample times (epoch s) first, then one row per queue
 */
function completionRates(history, ids) {
  /** @type {[QueueSample, QueueSample][]} */
  const pairs = [];
  history.forEach((sample, k) => {
    const previous = history[k - 1];
    if (previous !== undefined) pairs.push([previous, sample]);
  });
  const rows = ids.map((id) =>
    pairs.map(([previous, sample]) => {
      const dt = (sample.t - previous.t) / 60_000;
      const a = previous.q[id]?.[5];
      const b = sample.q[id]?.[5];
      return a === null || b === null || a === undefined || b === undefined || dt <= 0
        ? null
        : Math.max(0, b - a) / dt;
    }),
  );
  return [pairs.map(([, sample]) => sample.t / 1000), ...rows];
}

/** How much history the charts keep, ms. */
const HISTORY_MS = 60 * 60_000;

/**
 * The queues' numbers, polled every sample; the samples of the last {@link HISTORY_MS}.
 * @param {ConfigView} config
 */
function useQueues(config) {
  const [view, setView] = useState(/** @type {QueuesView | null} */ (null));
  const [history, setHistory] = useState(/** @type {QueuesView['history']} */ ([]));
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const since = useRef(0);

  useEffect(() => {
    let stopped = false;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    const tick = async () => {
      try {
        const next = await getQueues(since.current);
        if (stopped) return;
        setView(next);
        setError(null);
        const last = next.history.at(-1);
        if (last !== undefined) {
          since.current = last.t;
          setHistory((old) => {
            const cut = last.t - HISTORY_MS;
            return [...old, ...next.history].filter((s) => s.t >= cut);
          });
        }
      } catch (e) {
        if (!stopped) setError(messageOf(e));
      }
      if (!stopped) timer = setTimeout(tick, Math.max(1, config.sampleSeconds) * 1000);
    };
    tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, []);
  return { view, history, error };
}

/**
 * The depth chart's lines: per queue, messages waiting (visible + in flight + delayed), then its DLQ (dashed).
 * @param {QueuesView['history']} history
 * @param {readonly string[]} ids
 */
function depthChart(history, ids) {
  /** @type {ChartSeries[]} */
  const series = [];
  /** @type {(number | null)[][]} */
  const data = [history.map((s) => s.t / 1000)];
  ids.forEach((id, i) => {
    series.push({ label: `${id}`, color: COLORS[i % COLORS.length] });
    data.push(history.map((s) => (s.q[id] ? s.q[id][0] + s.q[id][1] + s.q[id][2] : null)));
    series.push({ label: `${id} DLQ`, color: COLORS[i % COLORS.length], dash: [6, 4] });
    data.push(history.map((s) => (s.q[id] ? s.q[id][3] + s.q[id][4] : null)));
  });
  return { data, series };
}

/**
 * The completions chart (per minute), or null when the console has none.
 * @param {QueuesView['completions']} c
 * @param {QueuesView['history']} history
 * @param {readonly string[]} ids
 * @param {number} sampleSeconds
 */
function completionsChart(c, history, ids, sampleSeconds) {
  if (c.kind === 'counter') {
    return {
      data: completionRates(history, ids),
      note: `${c.label}; per minute, from samples every ${sampleSeconds} s.`,
    };
  }
  if (c.kind === 'series') {
    return {
      data: [c.t.map((t) => t / 1000), ...ids.map((id) => c.series[id] ?? c.t.map(() => null))],
      note: [c.label, ...c.notes].join('. '),
    };
  }
  return null;
}

/** @param {{ config: ConfigView }} props */
export function QueuesPage({ config }) {
  const { view, history, error } = useQueues(config);
  if (!view) return html`<p class="loading">Reading the queues…</p>`;
  const ids = config.queues.map((q) => q.id);
  const depth = depthChart(history, ids);
  const c = view.completions;
  const completions = completionsChart(c, history, ids, config.sampleSeconds);
  return html`<div>
    ${error || view.error ? html`<p class="error" role="alert">Cannot read the queues: ${error ?? view.error}</p>` : null}
    <${QueueTable} view=${view} history=${history} sampleSeconds=${config.sampleSeconds} />
    <${Chart}
      title="Messages waiting (visible + in flight + delayed); dashed: dead-letter queue"
      testId="depth-chart"
      data=${depth.data}
      series=${depth.series}
      yLabel="messages"
      note="Sampled by the console while it runs (GetQueueAttributes); the chart starts when the console started."
    />
    ${
      completions
        ? html`<${Chart}
            title="Completions per minute"
            testId="completions-chart"
            data=${completions.data}
            series=${ids.map((id, i) => ({ label: id, color: COLORS[i % COLORS.length] }))}
            yLabel="jobs / min"
            note=${completions.note}
          />`
        : html`<section class="card"><h3>Completions</h3><p class="note">${c.label}</p></section>`
    }
    ${view.alarms ? html`<${Alarms} alarms=${view.alarms} />` : null}
    <${LimitsPanel} />
    ${config.notes.length > 0 ? html`<section class="card"><h3>About this setup</h3><ul class="notes">${config.notes.map((n) => html`<li>${n}</li>`)}</ul></section>` : null}
  </div>`;
}

/**
 * Each queue's latest numbers, its dead letters (a link to them), completions and alarms.
 * @param {{ view: QueuesView, history: QueuesView['history'], sampleSeconds: number }} props
 */
function QueueTable({ view, history, sampleSeconds }) {
  const c = view.completions;
  /** @param {string} id */
  const latestCompleted = (id) => {
    if (c.kind !== 'counter') return null;
    return history.at(-1)?.q[id]?.[5] ?? null;
  };
  /** @param {string} id */
  const alarmsOf = (id) => (view.alarms?.items ?? []).filter((a) => a.queueId === id);
  return html`<section class="card">
    <h2>Queues <small>updated ${time(view.at)}, every ${sampleSeconds} s</small></h2>
    <table class="queues">
      <thead>
        <tr>
          <th>Queue</th>
          <th title="ApproximateNumberOfMessages: waiting to be received">Visible</th>
          <th title="ApproximateNumberOfMessagesNotVisible: being worked on, or waiting out a retry backoff">In flight</th>
          <th title="ApproximateNumberOfMessagesDelayed">Delayed</th>
          <th title="Age of the oldest message">Oldest</th>
          <th title="Messages in the dead-letter queue (what the DLQ depth alarm counts)">Dead letters</th>
          ${c.kind === 'counter' ? html`<th title=${c.label}>Completed</th>` : null}
          ${view.alarms ? html`<th>Alarms</th>` : null}
        </tr>
      </thead>
      <tbody>
        ${view.queues.map(
          (q) => html`<tr data-queue=${q.id}>
            <td>
              <strong>${q.id}</strong> ${q.fifo ? html`<span class="badge">FIFO</span>` : null}
              <div class="sub">${q.name}</div>
            </td>
            <td data-field="visible">${q.visible}</td>
            <td data-field="inFlight">${q.inFlight}</td>
            <td data-field="delayed">${q.delayed}</td>
            <td data-field="oldest" title=${q.oldestAgeNote ?? ''}>${age(q.oldestAgeSeconds)}</td>
            <td data-field="dlq">
              ${
                q.dlq
                  ? html`<a href=${href('/dead-letters', { queue: q.id })} class=${q.dlq.visible + q.dlq.inFlight > 0 ? 'bad' : 'ok'}
                      >${q.dlq.visible}${q.dlq.inFlight > 0 ? ` (+${q.dlq.inFlight} held)` : ''}</a
                    >`
                  : html`<span title=${q.dlqNote ?? ''}>none</span>`
              }
            </td>
            ${c.kind === 'counter' ? html`<td data-field="completed">${latestCompleted(q.id) ?? '–'}</td>` : null}
            ${
              view.alarms
                ? html`<td>
                    ${
                      alarmsOf(q.id).filter((a) => a.state === 'ALARM').length > 0
                        ? html`<span class="bad">${alarmsOf(q.id).filter((a) => a.state === 'ALARM').length} in ALARM</span>`
                        : html`<span class="ok">${alarmsOf(q.id).length} OK</span>`
                    }
                  </td>`
                : null
            }
          </tr>`,
        )}
      </tbody>
    </table>
    <p class="note">
      Counts are approximate, as SQS reports them. "In flight" includes jobs waiting out a retry backoff. A dead letter is a
      job that failed permanently or used up its attempts: open it to see why.
    </p>
  </section>`;
}

/** @param {{ alarms: NonNullable<QueuesView['alarms']> }} props */
function Alarms({ alarms }) {
  return html`<section class="card" data-testid="alarms">
    <h3>Alarms <small>${alarms.label}</small></h3>
    ${alarms.error ? html`<p class="error">${alarms.error}</p>` : null}
    <table>
      <thead><tr><th>State</th><th>Alarm</th><th>Queue</th><th>Since</th><th>Reason</th></tr></thead>
      <tbody>
        ${alarms.items.map(
          (a) => html`<tr>
            <td><span class=${a.state === 'ALARM' ? 'bad' : a.state === 'OK' ? 'ok' : 'warn'}>${a.state}</span></td>
            <td>${a.name}<div class="sub">${a.metric ?? ''}</div></td>
            <td>${a.queueId ?? '–'}</td>
            <td>${time(a.updatedAt)}</td>
            <td class="reason">${a.reason}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}
