// One dead letter: its evidence (why it failed, how often, where from) and its body as sent.
/** @import { FullMessageView, MessageView } from './types.ts' */
import { messageOf, readMessage } from './api.js';
import { pretty, time } from './format.js';
import { href } from './route.js';
import { html, useEffect, useState } from './vendor/preact-htm.js';

/** @param {{ message: FullMessageView }} props */
export function Evidence({ message }) {
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

/** @param {{ queueId: string, messageId: string }} props */
export function MessagePanel({ queueId, messageId }) {
  const [data, setData] = useState(/** @type {MessageView | null} */ (null));
  const [error, setError] = useState(/** @type {string | null} */ (null));
  useEffect(() => {
    setData(null);
    readMessage(queueId, messageId).then(setData, (e) => setError(messageOf(e)));
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
