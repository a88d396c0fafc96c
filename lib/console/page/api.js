// The console's JSON API, called with this browser session's page secret (never the console's
// key): only the answer to the printed URL carries it; sessionStorage keeps it for reloads of
// this tab and, unlike cookies, is kept apart by port, so no other local server can read it
// (lib/console/sessions.ts). One function per route of lib/console/server.ts, typed by the view
// the backend builds for it.
/** @import { CancelView, ConfigView, DeadLettersView, DryRunView, FilterFields, FiredView, JobView, LimitsView, MessageView, QueuesView, RedriveResultView, SchedulesView, VerifyView } from './types.ts' */
import { document, history, location } from './browser.js';

const SECRET_ITEM = 'sqs-jobs-console-secret';
const fromPage = document.querySelector('meta[name="sqs-jobs-token"]')?.getAttribute('content') ?? '';
if (fromPage !== '') sessionStorage.setItem(SECRET_ITEM, fromPage);
const TOKEN = sessionStorage.getItem(SECRET_ITEM) ?? '';
// The key came in the URL: keep it out of the address bar and the history.
if (location.search.includes('token=')) history.replaceState(null, '', location.pathname + location.hash);

/**
 * Calls the API; the answer's JSON as `T` (one of the views below).
 * @template T
 * @param {string} path
 * @param {{ method?: 'GET' | 'POST', body?: unknown }} [options] a body is sent as JSON
 * @returns {Promise<T>}
 * @throws {Error} with the server's `error` message when the answer is not 2xx
 */
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
  /** @type {{ error?: string }} */
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = { error: text };
  }
  if (!response.ok) throw new Error(json.error ?? `HTTP ${response.status}`);
  return /** @type {T} */ (json);
}

/**
 * The message of a caught value.
 * @param {unknown} error
 */
export function messageOf(error) {
  return error instanceof Error ? error.message : String(error);
}

/** @returns {Promise<ConfigView>} */
export function getConfig() {
  return api('/api/config');
}

/**
 * The queues, with the samples taken after `since`.
 * @param {number} since epoch ms
 * @returns {Promise<QueuesView>}
 */
export function getQueues(since) {
  return api(`/api/queues?since=${since}`);
}

/**
 * A queue's dead letters (a POST: a read holds the messages for a while).
 * @param {string} queueId
 * @param {boolean} refresh read the DLQ again rather than the console's last read
 * @returns {Promise<DeadLettersView>}
 */
export function readDeadLetters(queueId, refresh) {
  return api(`/api/queues/${encodeURIComponent(queueId)}/dead-letters`, {
    method: 'POST',
    body: { refresh },
  });
}

/**
 * One dead letter, whole.
 * @param {string} queueId
 * @param {string} messageId
 * @returns {Promise<MessageView>}
 */
export function readMessage(queueId, messageId) {
  return api(`/api/queues/${encodeURIComponent(queueId)}/dead-letters/${encodeURIComponent(messageId)}`, {
    method: 'POST',
    body: {},
  });
}

/**
 * A redrive's dry run: what it would move, and the plan to confirm.
 * @param {string} queueId
 * @param {FilterFields} filter
 * @returns {Promise<DryRunView>}
 */
export function dryRunRedrive(queueId, filter) {
  return api(`/api/queues/${encodeURIComponent(queueId)}/redrive`, {
    method: 'POST',
    body: { dryRun: true, filter },
  });
}

/**
 * Carries out a dry run's plan.
 * @param {string} queueId
 * @param {string} planId
 * @returns {Promise<RedriveResultView>}
 */
export function confirmRedrive(queueId, planId) {
  return api(`/api/queues/${encodeURIComponent(queueId)}/redrive`, {
    method: 'POST',
    body: { dryRun: false, planId },
  });
}

/**
 * What came back of a redrive so far.
 * @param {string} redriveId
 * @returns {Promise<VerifyView>}
 */
export function verifyRedrive(redriveId) {
  return api(`/api/redrives/${redriveId}/verify`, { method: 'POST', body: {} });
}

/**
 * A job: record, steps, chain, dead letters.
 * @param {Readonly<Record<string, string>>} lookup `type` and `key`, or `source` and `id`; `steps`
 * @returns {Promise<JobView>}
 */
export function lookUpJob(lookup) {
  return api('/api/jobs', { method: 'POST', body: lookup });
}

/** @returns {Promise<SchedulesView>} pending jobs sent for later and recurring schedules */
export function getSchedules() {
  return api('/api/schedules');
}

/** @returns {Promise<LimitsView>} each flow-control limit's current rate and holders */
export function getLimits() {
  return api('/api/limits');
}

/**
 * Cancels a job sent for later.
 * @param {string} jobId
 * @param {string} source
 * @returns {Promise<CancelView>}
 */
export function cancelScheduledJob(jobId, source) {
  return api('/api/schedules/cancel', { method: 'POST', body: { jobId, source } });
}

/**
 * Fires a recurring schedule now.
 * @param {string} name
 * @param {string} group
 * @returns {Promise<FiredView>}
 */
export function fireSchedule(name, group) {
  return api('/api/schedules/fire', { method: 'POST', body: { name, group } });
}
