// A redrive: its dry run, the confirmed run of that plan, then what came back, checked until the
// redriven jobs settle (at most five minutes).
/** @import { DryRunView, FilterFields, RedriveResultView, VerifyView } from './types.ts' */
import { confirmRedrive, dryRunRedrive, messageOf, verifyRedrive } from './api.js';
import { plural, time } from './format.js';
import { href } from './route.js';
import { html, useEffect, useState } from './vendor/preact-htm.js';

/**
 * What a run skipped, in words.
 * @param {DryRunView['skipped']} s
 */
function skippedText(s) {
  return [
    s.notSelected ? `${s.notSelected} not selected` : '',
    s.groupBlocked ? `${s.groupBlocked} held back to keep their message group in order (FIFO)` : '',
    s.cameBack ? `${s.cameBack} came back during the run` : '',
  ]
    .filter((t) => t !== '')
    .join(', ');
}

/**
 * What came back of a confirmed redrive: checked 1 s after it, then every 2 s until the target
 * queue is empty and no redriven job is running (at most five minutes).
 * @param {string | undefined} redriveId
 * @param {(message: string) => void} onError
 * @returns {VerifyView | null}
 */
function useVerification(redriveId, onError) {
  const [verify, setVerify] = useState(/** @type {VerifyView | null} */ (null));
  useEffect(() => {
    if (!redriveId) return undefined;
    let stopped = false;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    const started = Date.now();
    const check = async () => {
      try {
        const v = await verifyRedrive(redriveId);
        if (stopped) return;
        setVerify(v);
        const settled =
          v.targetPending === 0 && v.jobs.every((j) => j.status !== 'IN_PROGRESS' && j.status !== 'RELEASED');
        if (settled || Date.now() - started > 5 * 60_000) return;
      } catch (e) {
        if (!stopped) onError(messageOf(e));
      }
      if (!stopped) timer = setTimeout(check, 2_000);
    };
    timer = setTimeout(check, 1_000);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [redriveId]);
  return verify;
}

/**
 * @param {{ queueId: string, filter: FilterFields, onDone: () => void, onClose: () => void }} props
 *   `onDone`: after the confirmed run (the DLQ changed)
 */
export function RedrivePanel({ queueId, filter, onDone, onClose }) {
  const [plan, setPlan] = useState(/** @type {DryRunView | null} */ (null));
  const [result, setResult] = useState(/** @type {RedriveResultView | null} */ (null));
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(true);

  useEffect(() => {
    dryRunRedrive(queueId, filter)
      .then(setPlan, (e) => setError(messageOf(e)))
      .finally(() => setBusy(false));
  }, []);

  const verify = useVerification(result?.redriveId, setError);

  const confirm = async () => {
    if (!plan) return; // the button shows with the plan only
    setBusy(true);
    try {
      setResult(await confirmRedrive(queueId, plan.planId));
      onDone();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };

  return html`<section class="card redrive" data-testid="redrive">
    <h3>Redrive <small>${queueId}: ${plan?.filter ?? 'selected messages'}</small> <button class="link" onClick=${onClose}>close</button></h3>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${busy && !plan ? html`<p class="loading">Dry run: reading the dead-letter queue, moving nothing…</p>` : null}
    ${plan ? html`<${DryRun} plan=${plan} confirmed=${result !== null} busy=${busy} onConfirm=${confirm} />` : null}
    ${result ? html`<${RedriveResult} result=${result} />` : null}
    ${verify ? html`<${Verification} verify=${verify} queueId=${queueId} />` : null}
  </section>`;
}

/**
 * A dry run's plan, and the button that carries it out (until it is).
 * @param {{ plan: DryRunView, confirmed: boolean, busy: boolean, onConfirm: () => void }} props
 */
function DryRun({ plan, confirmed, busy, onConfirm }) {
  return html`<div data-testid="dry-run">
    <p>
      <strong>Dry run:</strong> <span data-field="selected">${plan.selected}</span> ${plan.selected === 1 ? 'message' : 'messages'} selected
      in <code>${plan.dlq}</code>, to go back to <code>${plan.target}</code>${plan.fifo ? ' (FIFO: same message group, in DLQ order, fresh deduplication id)' : ''}.${' '}
      ${plural(plan.read, 'message')} read${skippedText(plan.skipped) ? `; ${skippedText(plan.skipped)}` : ''}${plan.notRead > 0 ? `; about ${plan.notRead} not read` : ''}; nothing moved yet.
    </p>
    <p data-field="scope">${plan.scope.text}</p>
    ${plan.warnings.map((w) => html`<p class="warn">warning: ${w}</p>`)}
    ${plan.sample.length > 0 ? html`<ul class="sample">${plan.sample.map((i) => html`<li>${i.jobType} ${i.jobId ?? i.messageId} <span class="sub">${i.reason}</span></li>`)}</ul>` : null}
    ${
      !confirmed
        ? html`<p>
            <button class="primary" data-action="confirm-redrive" disabled=${busy || plan.selected === 0} onClick=${onConfirm}>
              Move them to ${plan.target}
            </button>
            <span class="note"> Fix the cause first: a job that fails the same way comes straight back.</span>
          </p>`
        : null
    }
  </div>`;
}

/**
 * What a confirmed run moved.
 * @param {{ result: RedriveResultView }} props
 */
function RedriveResult({ result }) {
  return html`<div data-testid="redrive-result">
    <p>
      <strong>Moved <span data-field="moved">${result.moved.length}</span></strong>
      ${result.failed.length > 0 ? html`, <span class="bad">${result.failed.length} failed (still in the DLQ)</span>` : null}
      ${result.notDeleted.length > 0 ? html`, <span class="bad">${result.notDeleted.length} sent but not deleted (in both queues)</span>` : null}.
      ${result.moved.length > result.dryRunSelected ? html` <span class="note">The dry run saw ${result.dryRunSelected}: ${result.fifo ? 'the others waited behind the first of their message group' : 'the others arrived since'}.</span>` : null}
    </p>
    ${result.failed.map((f) => html`<p class="bad">${f.jobId ?? f.messageId}: ${f.code} ${f.message}</p>`)}
  </div>`;
}

/**
 * What came back of the redrive, and each redriven job's idempotency status.
 * @param {{ verify: VerifyView, queueId: string }} props
 */
function Verification({ verify, queueId }) {
  return html`<div data-testid="verify">
    <p>
      <strong>What came back:</strong>${' '}
      ${
        verify.cameBack.length === 0
          ? html`<span class="ok" data-field="came-back">nothing came back to the DLQ</span>`
          : html`<span class="bad" data-field="came-back">${verify.cameBack.length} of ${verify.redrivenJobs} jobs came back</span>`
      }
      ${(verify.targetPending ?? 0) > 0 ? html` <span class="note">(${verify.targetPending} messages still in ${queueId}: checking again…)</span>` : null}
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
  </div>`;
}
