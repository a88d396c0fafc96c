// The flow-control limits panel of the queues page (`GET /api/limits`, lib/ops/limits.ts): per
// concurrency key its running jobs against its limit, per rate limit its current rate against the
// declared one. Read when the page opens and on Refresh: each read Scans the idempotency table.
import { getLimits } from './api.js';
import { time } from './format.js';
import { useRefreshedView } from './refreshed-view.js';
import { html } from './vendor/preact-htm.js';

/**
 * A number with `digits` decimals, `?` when unknown.
 * @param {number | undefined} value
 * @param {number} digits
 */
function fixed(value, digits) {
  return value === undefined ? '?' : value.toFixed(digits);
}

export function LimitsPanel() {
  const { view, error, busy, load } = useRefreshedView(getLimits);
  const rows = (view?.tables ?? []).flatMap((t) => t.rows.map((row) => ({ table: t.table, row })));
  return html`<section class="card" data-testid="limits">
    <h3>
      Flow-control limits
      <button type="button" onClick=${load} disabled=${busy} data-testid="limits-refresh">Refresh</button>
    </h3>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${view && rows.length === 0 ? html`<p class="note">No job has taken a concurrency slot or a rate-limit token yet.</p>` : null}
    ${
      rows.length > 0
        ? html`<table>
            <thead><tr><th>Kind</th><th>Limit</th><th>Key</th><th>Now</th><th>Declared</th><th>Notes</th></tr></thead>
            <tbody>
              ${rows.map(({ row }) =>
                row.kind === 'concurrency'
                  ? html`<tr data-limit=${`concurrency:${row.name}:${row.key}`}>
                      <td>concurrency</td><td>${row.name}</td><td>${row.key}</td>
                      <td data-field="holders">${row.holders} running</td>
                      <td data-field="limit">${row.limit ?? '?'}</td>
                      <td>${row.expiredHolders > 0 ? html`<span class="warn">${row.expiredHolders} expired (crashed runs)</span>` : ''}</td>
                    </tr>`
                  : html`<tr data-limit=${`rate:${row.name}:${row.key}`}>
                      <td>rate</td><td>${row.name}</td><td>${row.key}</td>
                      <td data-field="rate" class=${row.rate !== undefined && row.perSecond !== undefined && row.rate < row.perSecond ? 'warn' : ''}>${fixed(row.rate, 2)}/s</td>
                      <td data-field="perSecond">${fixed(row.perSecond, 2)}/s</td>
                      <td>${fixed(row.tokens, 1)} tokens${row.decreasedAtMs === undefined ? '' : `, lowered by throttling at ${time(row.decreasedAtMs)}`}</td>
                    </tr>`,
              )}
            </tbody>
          </table>`
        : null
    }
    ${(view?.notes ?? []).map((n) => html`<p class="note">${n}</p>`)}
    <p class="note">
      A job waiting on a limit is a delayed message on a standard queue (the Delayed column), in flight on a FIFO queue.
      Each read scans the idempotency table.
    </p>
  </section>`;
}
