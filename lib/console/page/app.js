// The sqs-jobs console page: three views (queues, dead letters, jobs) over the console's JSON API.
//
// Libraries, loaded as they are (no build step): Preact + htm in htm's one-file standalone build
// (13 KB: components and hooks written as tagged templates, no JSX compiler), and uPlot for the
// charts (small and fast on thousands of points, canvas-based, ESM). Both are served by the
// console itself; the page makes no request anywhere else.
import { html, render, useCallback, useEffect, useRef, useState } from './vendor/preact-htm.js';
import uPlot from './vendor/uplot.js';

// The page secret of this browser session (never the console's key): only the answer to the
// printed URL carries it; sessionStorage keeps it for reloads of this tab and, unlike cookies,
// is kept apart by port, so no other local server can read it (lib/console/sessions.ts).
const SECRET_ITEM = 'sqs-jobs-console-secret';
const fromPage = document.querySelector('meta[name="sqs-jobs-token"]')?.getAttribute('content') ?? '';
if (fromPage !== '') sessionStorage.setItem(SECRET_ITEM, fromPage);
const TOKEN = sessionStorage.getItem(SECRET_ITEM) ?? '';
// The key came in the URL: keep it out of the address bar and the history.
if (location.search.includes('token=')) history.replaceState(null, '', location.pathname + location.hash);

const COLORS = ['#2563eb', '#16a34a', '#d97706', '#9333ea', '#0891b2', '#db2777', '#65a30d', '#dc2626'];

async function api(path, options = {}) {
  const response = await fetch(path, {
    method: options.method ?? 'GET',
    headers: {
      'x-sqs-jobs-token': TOKEN,
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = { error: text };
  }
  if (!response.ok) throw new Error(json.error ?? `HTTP ${response.status}`);
  return json;
}

// ---------------------------------------------------------------------------------------------
// Formatting

function time(value) {
  if (value === undefined || value === null || value === '') return '–';
  const date = typeof value === 'number' ? new Date(value) : new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return date.toLocaleString(undefined, { hour12: false });
}

function age(seconds) {
  if (seconds === null || seconds === undefined) return 'n/a';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

// ---------------------------------------------------------------------------------------------
// Routing: #/queues, #/dead-letters?queue=..&message=.., #/jobs?type=..&key=..

function parseRoute() {
  const [path, query = ''] = location.hash.replace(/^#/, '').split('?');
  return { path: path || '/queues', params: Object.fromEntries(new URLSearchParams(query)) };
}

function href(path, params = {}) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== ''));
  const text = query.toString();
  return `#${path}${text ? `?${text}` : ''}`;
}

function useRoute() {
  const [route, setRoute] = useState(parseRoute());
  useEffect(() => {
    const onChange = () => setRoute(parseRoute());
    window.addEventListener('hashchange', onChange);
    return () => window.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

// ---------------------------------------------------------------------------------------------
// Charts

function Chart({ title, data, series, note, yLabel, testId }) {
  const ref = useRef(null);
  const plot = useRef(null);
  const shape = series.map((s) => s.label).join('|');
  useEffect(() => {
    const el = ref.current;
    if (!el) return undefined;
    const opts = {
      width: Math.max(300, el.clientWidth),
      height: 220,
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
      axes: [
        {
          values: (_u, splits) =>
            splits.map((t) => new Date(t * 1000).toLocaleTimeString(undefined, { hour12: false })),
        },
        { label: yLabel, size: 50 },
      ],
      series: [
        {},
        ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, dash: s.dash, spanGaps: true })),
      ],
      legend: { live: true },
    };
    plot.current = new uPlot(opts, data, el);
    const onResize = () => plot.current?.setSize({ width: Math.max(300, el.clientWidth), height: 220 });
    window.addEventListener('resize', onResize);
    return () => {
      window.removeEventListener('resize', onResize);
      plot.current?.destroy();
      plot.current = null;
    };
  }, [shape]);
  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);
  return html`<section class="card chart" data-testid=${testId}>
    <h3>${title}</h3>
    <div ref=${ref}></div>
    ${note ? html`<p class="note">${note}</p>` : null}
  </section>`;
}

// ---------------------------------------------------------------------------------------------
// Queues

const HISTORY_MS = 60 * 60_000;

function QueuesPage({ config }) {
  const [view, setView] = useState(null);
  const [history, setHistory] = useState([]);
  const [error, setError] = useState(null);
  const since = useRef(0);

  useEffect(() => {
    let stopped = false;
    let timer;
    const tick = async () => {
      try {
        const next = await api(`/api/queues?since=${since.current}`);
        if (stopped) return;
        setView(next);
        setError(null);
        if (next.history.length > 0) {
          since.current = next.history[next.history.length - 1].t;
          setHistory((old) => {
            const merged = [...old, ...next.history];
            const cut = merged[merged.length - 1].t - HISTORY_MS;
            return merged.filter((s) => s.t >= cut);
          });
        }
      } catch (e) {
        if (!stopped) setError(e.message);
      }
      if (!stopped) timer = setTimeout(tick, Math.max(1, config.sampleSeconds) * 1000);
    };
    tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, []);

  if (!view) return html`<p class="loading">Reading the queues…</p>`;
  const ids = config.queues.map((q) => q.id);
  const x = history.map((s) => s.t / 1000);
  const depthSeries = [];
  const depthData = [x];
  ids.forEach((id, i) => {
    depthSeries.push({ label: `${id}`, color: COLORS[i % COLORS.length] });
    depthData.push(history.map((s) => (s.q[id] ? s.q[id][0] + s.q[id][1] + s.q[id][2] : null)));
    depthSeries.push({ label: `${id} DLQ`, color: COLORS[i % COLORS.length], dash: [6, 4] });
    depthData.push(history.map((s) => (s.q[id] ? s.q[id][3] + s.q[id][4] : null)));
  });

  let completions = null;
  const c = view.completions;
  if (c.kind === 'counter') {
    const cx = [];
    const rows = ids.map(() => []);
    for (let k = 1; k < history.length; k++) {
      const dt = (history[k].t - history[k - 1].t) / 60_000;
      cx.push(history[k].t / 1000);
      ids.forEach((id, i) => {
        const a = history[k - 1].q[id]?.[5];
        const b = history[k].q[id]?.[5];
        rows[i].push(
          a === null || b === null || a === undefined || b === undefined || dt <= 0
            ? null
            : Math.max(0, b - a) / dt,
        );
      });
    }
    completions = {
      data: [cx, ...rows],
      note: `${c.label}; per minute, from samples every ${config.sampleSeconds} s.`,
    };
  } else if (c.kind === 'series') {
    completions = {
      data: [c.t.map((t) => t / 1000), ...ids.map((id) => c.series[id] ?? c.t.map(() => null))],
      note: [c.label, ...c.notes].join('. '),
    };
  }
  const latestCompleted = (id) => {
    if (c.kind !== 'counter' || history.length === 0) return null;
    return history[history.length - 1].q[id]?.[5] ?? null;
  };
  const alarmsOf = (id) => (view.alarms?.items ?? []).filter((a) => a.queueId === id);

  return html`<div>
    ${error || view.error ? html`<p class="error" role="alert">Cannot read the queues: ${error ?? view.error}</p>` : null}
    <section class="card">
      <h2>Queues <small>updated ${time(view.at)}, every ${config.sampleSeconds} s</small></h2>
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
    </section>
    <${Chart}
      title="Messages waiting (visible + in flight + delayed); dashed: dead-letter queue"
      testId="depth-chart"
      data=${depthData}
      series=${depthSeries}
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
    ${config.notes.length > 0 ? html`<section class="card"><h3>About this setup</h3><ul class="notes">${config.notes.map((n) => html`<li>${n}</li>`)}</ul></section>` : null}
  </div>`;
}

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

// ---------------------------------------------------------------------------------------------
// Dead letters

function DeadLettersPage({ config, params }) {
  const queueId = params.queue ?? config.queues[0]?.id;
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const [loading, setLoading] = useState(false);
  const [redrive, setRedrive] = useState(null);

  const load = useCallback(
    async (refresh) => {
      if (!queueId) return;
      setLoading(true);
      try {
        setData(
          await api(`/api/queues/${encodeURIComponent(queueId)}/dead-letters`, {
            method: 'POST',
            body: { refresh: refresh === true },
          }),
        );
        setError(null);
      } catch (e) {
        setError(e.message);
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
        ? html`<section class="card">
            <h2>
              Dead letters of ${data.queue.id} <small>${data.dlq.name}${data.dlq.fifo ? ' (FIFO)' : ''}</small>
              <button onClick=${() => load(true)} disabled=${loading} data-action="reload">${loading ? 'Reading…' : 'Read again'}</button>
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
                        ${config.readOnly ? null : html`<th></th>`}
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
                            config.readOnly
                              ? null
                              : html`<td><button data-action="redrive-group" onClick=${() => setRedrive({ filter: { reasons: [g.reason], jobTypes: [g.jobType] }, key: Math.random() })}>Redrive…</button></td>`
                          }
                        </tr>`,
                      )}
                    </tbody>
                  </table>`
            }
            ${config.readOnly ? html`<p class="note">Read-only console: redrive is off.</p>` : html`<${FilterForm} onRedrive=${(filter) => setRedrive({ filter, key: Math.random() })} />`}
          </section>`
        : null
    }
    ${redrive && !config.readOnly ? html`<${RedrivePanel} key=${redrive.key} queueId=${queueId} filter=${redrive.filter} onDone=${() => load(true)} onClose=${() => setRedrive(null)} />` : null}
    ${params.message && data ? html`<${MessagePanel} queueId=${queueId} messageId=${params.message} />` : null}
    ${
      data && data.messages.length > 0
        ? html`<section class="card">
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
          </section>`
        : null
    }
  </div>`;
}

function FilterForm({ onRedrive }) {
  const [open, setOpen] = useState(false);
  const [fields, setFields] = useState({ reasons: '', jobTypes: '', errorNames: '', jobIds: '' });
  if (!open)
    return html`<p><button class="link" onClick=${() => setOpen(true)} data-action="open-filter">Redrive by filter…</button></p>`;
  const set = (name) => (e) => setFields({ ...fields, [name]: e.currentTarget.value });
  const split = (text) =>
    text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  return html`<form
    class="filter"
    onSubmit=${(e) => {
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

function RedrivePanel({ queueId, filter, onDone, onClose }) {
  const [plan, setPlan] = useState(null);
  const [result, setResult] = useState(null);
  const [verify, setVerify] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(true);
  const path = `/api/queues/${encodeURIComponent(queueId)}/redrive`;

  useEffect(() => {
    api(path, { method: 'POST', body: { dryRun: true, filter } })
      .then(setPlan, (e) => setError(e.message))
      .finally(() => setBusy(false));
  }, []);

  useEffect(() => {
    if (!result?.redriveId) return undefined;
    let stopped = false;
    let timer;
    const started = Date.now();
    const check = async () => {
      try {
        const v = await api(`/api/redrives/${result.redriveId}/verify`, { method: 'POST', body: {} });
        if (stopped) return;
        setVerify(v);
        const settled =
          v.targetPending === 0 && v.jobs.every((j) => j.status !== 'IN_PROGRESS' && j.status !== 'RELEASED');
        if (settled || Date.now() - started > 5 * 60_000) return;
      } catch (e) {
        if (!stopped) setError(e.message);
      }
      if (!stopped) timer = setTimeout(check, 2_000);
    };
    timer = setTimeout(check, 1_000);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [result?.redriveId]);

  const confirm = async () => {
    setBusy(true);
    try {
      setResult(await api(path, { method: 'POST', body: { dryRun: false, planId: plan.planId } }));
      onDone();
    } catch (e) {
      setError(e.message);
    } finally {
      setBusy(false);
    }
  };

  const skipped = (s) =>
    [
      s.notSelected ? `${s.notSelected} not selected` : '',
      s.groupBlocked ? `${s.groupBlocked} held back to keep their message group in order (FIFO)` : '',
      s.cameBack ? `${s.cameBack} came back during the run` : '',
    ]
      .filter((t) => t !== '')
      .join(', ');

  return html`<section class="card redrive" data-testid="redrive">
    <h3>Redrive <small>${queueId}: ${plan?.filter ?? 'selected messages'}</small> <button class="link" onClick=${onClose}>close</button></h3>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${busy && !plan ? html`<p class="loading">Dry run: reading the dead-letter queue, moving nothing…</p>` : null}
    ${
      plan
        ? html`<div data-testid="dry-run">
            <p>
              <strong>Dry run:</strong> <span data-field="selected">${plan.selected}</span> ${plan.selected === 1 ? 'message' : 'messages'} selected
              in <code>${plan.dlq}</code>, to go back to <code>${plan.target}</code>${plan.fifo ? ' (FIFO: same message group, in DLQ order, fresh deduplication id)' : ''}.${' '}
              ${plural(plan.read, 'message')} read${skipped(plan.skipped) ? `; ${skipped(plan.skipped)}` : ''}${plan.notRead > 0 ? `; about ${plan.notRead} not read` : ''}; nothing moved yet.
            </p>
            <p data-field="scope">${plan.scope.text}</p>
            ${plan.warnings.map((w) => html`<p class="warn">warning: ${w}</p>`)}
            ${plan.sample.length > 0 ? html`<ul class="sample">${plan.sample.map((i) => html`<li>${i.jobType} ${i.jobId ?? i.messageId} <span class="sub">${i.reason}</span></li>`)}</ul>` : null}
            ${
              !result
                ? html`<p>
                    <button class="primary" data-action="confirm-redrive" disabled=${busy || plan.selected === 0} onClick=${confirm}>
                      Move them to ${plan.target}
                    </button>
                    <span class="note"> Fix the cause first: a job that fails the same way comes straight back.</span>
                  </p>`
                : null
            }
          </div>`
        : null
    }
    ${
      result
        ? html`<div data-testid="redrive-result">
            <p>
              <strong>Moved <span data-field="moved">${result.moved.length}</span></strong>
              ${result.failed.length > 0 ? html`, <span class="bad">${result.failed.length} failed (still in the DLQ)</span>` : null}
              ${result.notDeleted.length > 0 ? html`, <span class="bad">${result.notDeleted.length} sent but not deleted (in both queues)</span>` : null}.
              ${result.moved.length > result.dryRunSelected ? html` <span class="note">The dry run saw ${result.dryRunSelected}: ${result.fifo ? 'the others waited behind the first of their message group' : 'the others arrived since'}.</span>` : null}
            </p>
            ${result.failed.map((f) => html`<p class="bad">${f.jobId ?? f.messageId}: ${f.code} ${f.message}</p>`)}
          </div>`
        : null
    }
    ${
      verify
        ? html`<div data-testid="verify">
            <p>
              <strong>What came back:</strong>${' '}
              ${
                verify.cameBack.length === 0
                  ? html`<span class="ok" data-field="came-back">nothing came back to the DLQ</span>`
                  : html`<span class="bad" data-field="came-back">${verify.cameBack.length} of ${verify.redrivenJobs} jobs came back</span>`
              }
              ${verify.targetPending > 0 ? html` <span class="note">(${verify.targetPending} messages still in ${queueId}: checking again…)</span>` : null}
              <span class="sub"> checked ${time(verify.checkedAt)}</span>
            </p>
            ${verify.cameBack.map((c) => html`<p class="bad">${c.jobType} ${c.jobId}: ${c.reason} ${c.errorMessage ?? ''}</p>`)}
            ${
              verify.strandedParked.left.length > 0
                ? html`<div class="bad" data-testid="stranded-parked">
                    <p>${verify.strandedParked.left.length} job(s) parked while this redrive ran are still first of their group in the DLQ, though the park that put them there is gone:</p>
                    ${verify.strandedParked.left.map((l) => html`<p>${l.jobType} ${l.jobId ?? l.messageId} (group ${l.messageGroupId})</p>`)}
                    <p>Move them (and what waits behind them) with: <code>${verify.strandedParked.command}</code></p>
                  </div>`
                : null
            }
            <table>
              <thead><tr><th>Job</th><th>Type</th><th>Idempotency record</th></tr></thead>
              <tbody>
                ${verify.jobs.map(
                  (j) => html`<tr data-job=${j.jobId}>
                    <td><a href=${href('/jobs', { type: j.jobType, source: j.source, id: j.jobId })}>${j.jobId ?? '(no envelope id)'}</a></td>
                    <td>${j.jobType}</td>
                    <td data-field="status"><span class=${j.status === 'COMPLETED' ? 'ok' : j.status === 'FAILED' ? 'bad' : ''}>${j.status ?? 'not found'}</span></td>
                  </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : null
    }
  </section>`;
}

function Evidence({ message }) {
  const e = message.evidence;
  const rows = [
    ['Cause (ErrorReason)', e.errorReason ?? message.reason],
    ['Error', e.errorName],
    ['Message', e.errorMessage],
    ['Attempts', e.attempts],
    ['First failure', e.firstFailureAt ? time(e.firstFailureAt) : undefined],
    ['Last failure', e.lastFailureAt ? time(e.lastFailureAt) : undefined],
    ['Handler version', e.handlerVersion],
    ['Job type', e.jobType ?? message.jobType],
    ['Source message id', e.sourceMessageId],
    ['Message group', message.messageGroupId],
    ['In the DLQ since', time(message.sentAt)],
    // The lineage, from the body (the original envelope).
    ['Parent job id', message.job?.parentId],
    ['Root job id', message.job?.rootId],
    ['Correlation id', message.job?.correlationId],
    ['Trace id', message.job?.traceId],
  ].filter(([, v]) => v !== undefined && v !== '');
  return html`<div>
    ${message.hasEvidence ? null : html`<p class="note">No evidence attributes: SQS moved this message after maxReceiveCount receives (the worker crashed, timed out or was throttled).</p>`}
    <table class="evidence">${rows.map(([k, v]) => html`<tr><th>${k}</th><td>${v}</td></tr>`)}</table>
    ${e.errorStack ? html`<details><summary>Stack</summary><pre>${e.errorStack}</pre></details>` : null}
    <h4>Body <small>(unchanged, as the producer sent it)</small></h4>
    <pre class="body" data-testid="message-body">${pretty(message.body)}</pre>
  </div>`;
}

function MessagePanel({ queueId, messageId }) {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    setData(null);
    api(`/api/queues/${encodeURIComponent(queueId)}/dead-letters/${encodeURIComponent(messageId)}`, {
      method: 'POST',
      body: {},
    }).then(setData, (e) => setError(e.message));
  }, [queueId, messageId]);
  const m = data?.message;
  return html`<section class="card" data-testid="message">
    <h3>
      Dead letter ${m?.jobId ?? messageId}
      <a class="link" href=${href('/dead-letters', { queue: queueId })}>close</a>
    </h3>
    ${error ? html`<p class="error">${error}</p>` : null}
    ${
      m
        ? html`<div>
            ${m.job ? html`<p><a href=${href('/jobs', { type: m.jobType, source: m.job.source, id: m.job.id })} data-action="lookup-job">Look up this job (idempotency record, steps, its chain) →</a></p>` : null}
            <${Evidence} message=${m} />
          </div>`
        : null
    }
  </section>`;
}

// ---------------------------------------------------------------------------------------------
// Jobs

const RECORD_FIELDS = [
  ['status', 'Status'],
  ['attempt', 'Attempt'],
  ['redriveCount', 'Redrives'],
  ['lastError', 'Last error'],
  ['lastErrorKind', 'Last error kind'],
  ['messageId', 'SQS message id'],
];
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

const CHAIN_STATE = {
  done: ['ok', 'done'],
  'dead-lettered': ['bad', 'dead-lettered'],
  running: ['warn', 'running'],
  retrying: ['warn', 'retrying'],
  'queued-or-in-flight': ['warn', 'queued or in flight'],
};

/** The page of a job of a chain: by its envelope when its key is the default key, else by its key. */
function chainJobHref(job) {
  return job.id !== undefined
    ? href('/jobs', { type: job.type, source: job.source, id: job.id })
    : href('/jobs', { type: job.type, key: job.key });
}

function chainJobName(job) {
  return job.id ?? job.key ?? job.pk;
}

/** Parent and children of the job asked for, then the whole chain, each linking to its own page. */
function Chain({ chain, note, onRefresh }) {
  if (!chain)
    return html`<section class="card" data-testid="job-chain"><h3>Chain</h3><p class="note">${note ?? 'not available'}</p></section>`;
  const byPk = new Map(chain.jobs.map((j) => [j.pk, j]));
  const asked = chain.jobs.find((j) => j.asked);
  const parent = asked?.parentPk ? byPk.get(asked.parentPk) : undefined;
  const children = (asked?.childPks ?? []).map((pk) => byPk.get(pk)).filter((j) => j !== undefined);
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
    ${chain.notes.map((n) => html`<p class="note">${n}</p>`)}
  </section>`;
}

function JobsPage({ config, params }) {
  const [form, setForm] = useState({
    type: params.type ?? '',
    key: params.key ?? '',
    source: params.source ?? '',
    id: params.id ?? '',
    steps: params.steps ?? '',
  });
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const lookup = async (values) => {
    setBusy(true);
    try {
      const given = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ''));
      setData(await api('/api/jobs', { method: 'POST', body: given }));
      setError(null);
    } catch (e) {
      setError(e.message);
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
  const set = (name) => (e) => setForm({ ...form, [name]: e.currentTarget.value });
  const record = data?.record?.record;
  return html`<div>
    <section class="card">
      <h2>Look up a job</h2>
      <form
        class="lookup"
        onSubmit=${(e) => {
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
        ? html`<section class="card" data-testid="job-record">
            <h3>Idempotency record ${data.record ? html`<small><code>${data.record.table}</code> pk <code>${JSON.stringify(data.record.pk)}</code></small>` : null}</h3>
            ${data.recordNote ? html`<p class="note">${data.recordNote}</p>` : null}
            ${
              data.record && !record
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
                          html`<tr><th>${label}</th><td data-field=${k}>${time(record[k])}${k === 'leaseExpiresAtMs' && record.status === 'IN_PROGRESS' && record[k] < Date.now() ? ' (expired)' : ''}</td></tr>`,
                      )}
                      ${record.leaseToken ? html`<tr><th>Lease token</th><td><code>${String(record.leaseToken).slice(0, 8)}…</code></td></tr>` : null}
                    </table>
                    ${
                      record.status === 'COMPLETED'
                        ? record.resultStored === false
                          ? html`<p class="note">Result not stored (${record.resultOmittedReason}, ${record.resultBytes} bytes): a duplicate gets this marker, not the result.</p>`
                          : html`<h4>Result</h4><pre class="body">${record.result === undefined ? '(none: the job returned nothing)' : pretty(record.result)}</pre>`
                        : null
                    }
                    <details><summary>All attributes</summary><pre>${JSON.stringify(record, null, 2)}</pre></details>
                  </div>`
                : null
            }
            ${
              data.record
                ? html`<h4>once steps</h4>
                    <p class="note">${data.record.stepsNote}${data.record.stepsMissing.length ? `; no record for ${data.record.stepsMissing.join(', ')}` : ''}</p>
                    ${
                      data.record.steps.length === 0
                        ? html`<p class="empty">No step records.</p>`
                        : html`<table>
                            <thead><tr><th>Step</th><th>Done at</th><th>Attempt</th><th>Value</th></tr></thead>
                            <tbody>
                              ${data.record.steps.map(
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
          </section>
          <${Chain} chain=${data.chain} note=${data.chainNote} onRefresh=${() => lookup(form)} />
          <section class="card" data-testid="job-dead-letters">
            <h3>In a dead-letter queue</h3>
            ${data.deadLetterNotes.map((n) => html`<p class="note">${n}</p>`)}
            ${
              data.deadLetters.length === 0
                ? html`<p class="empty">Not in any dead-letter queue of this console.</p>`
                : data.deadLetters.map(
                    (d) => html`<div class="dead-letter">
                      <p><a href=${href('/dead-letters', { queue: d.queueId, message: d.message.messageId })}>${d.dlq}</a></p>
                      <${Evidence} message=${d.message} />
                    </div>`,
                  )
            }
          </section>`
        : null
    }
  </div>`;
}

// ---------------------------------------------------------------------------------------------
// Shell

function App() {
  const route = useRoute();
  const [config, setConfig] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    api('/api/config').then(
      (value) => {
        document.title = `${value.title} · sqs-jobs console`;
        setConfig(value);
      },
      (e) => setError(e.message),
    );
  }, []);
  if (error) return html`<p class="error" role="alert">${error}</p>`;
  if (!config) return html`<p class="loading">Loading…</p>`;
  const page = route.path.startsWith('/dead-letters')
    ? 'dead-letters'
    : route.path.startsWith('/jobs')
      ? 'jobs'
      : 'queues';
  const mode =
    config.mode === 'aws'
      ? `AWS ${config.region ?? ''}`
      : config.mode === 'local'
        ? 'local runtime'
        : 'endpoint';
  return html`<div class="shell">
    <header>
      <h1>sqs-jobs <span>${config.title}</span></h1>
      <nav>
        <a href="#/queues" class=${page === 'queues' ? 'active' : ''} data-nav="queues">Queues</a>
        <a href="#/dead-letters" class=${page === 'dead-letters' ? 'active' : ''} data-nav="dead-letters">Dead letters</a>
        <a href="#/jobs" class=${page === 'jobs' ? 'active' : ''} data-nav="jobs">Jobs</a>
      </nav>
      <span class="badge">${mode}</span>
      ${config.readOnly ? html`<span class="badge warn" data-testid="read-only">read-only</span>` : null}
    </header>
    <main data-page=${page}>
      ${page === 'queues' ? html`<${QueuesPage} config=${config} />` : null}
      ${page === 'dead-letters' ? html`<${DeadLettersPage} config=${config} params=${route.params} />` : null}
      ${page === 'jobs' ? html`<${JobsPage} config=${config} params=${route.params} />` : null}
    </main>
  </div>`;
}

render(html`<${App} />`, document.getElementById('app'));
