/**
 * lib/local/job-lines.ts: which worker log lines are job events, and how one reads. The lines
 * below have the shape the worker writes (docs/contracts.md, "Logs"); the integration test
 * test/integration/local-dev-loop.test.ts reads real ones from a running worker.
 */
import { describe, expect, it } from 'vitest';
import { formatJobLine, jobEventOf } from '../../lib/local/job-lines.ts';

const at = () => new Date('2026-12-01T10:00:00.000Z');

describe('jobEventOf', () => {
  it('reads a retry: type, id, attempt, duration, delay, reason and the error', () => {
    const line = JSON.stringify({
      level: 'WARN',
      message: 'job failed; it will be retried',
      timestamp: '2026-12-01T10:00:01.250Z',
      messageId: 'm-1',
      jobType: 'billing.issue-invoice',
      jobId: 'inv-7',
      attempt: 2,
      outcome: 'retry',
      reason: 'timeout',
      delaySeconds: 4,
      durationMs: 2004,
      error: { name: 'TimeoutError', message: 'the API did not answer', stack: 'TimeoutError: ...' },
    });
    const event = jobEventOf('BillingWorker', line, at);
    expect(event).toEqual({
      kind: 'job',
      time: '2026-12-01T10:00:01.250Z',
      functionLogicalId: 'BillingWorker',
      type: 'billing.issue-invoice',
      jobId: 'inv-7',
      messageId: 'm-1',
      outcome: 'retry',
      attempt: 2,
      durationMs: 2004,
      reason: 'timeout',
      delaySeconds: 4,
      error: 'TimeoutError: the API did not answer',
    });
    expect(event && formatJobLine(event)).toBe(
      '10:00:01.250  retry          billing.issue-invoice  inv-7  attempt 2  2004 ms  (again in 4 s; timeout; TimeoutError: the API did not answer)',
    );
  });

  it('reads a record that was not a job by its message id', () => {
    const line = JSON.stringify({
      message: 'job dead-lettered',
      messageId: 'm-9',
      outcome: 'dead-lettered',
      attempts: 1,
      reason: 'EnvelopeError',
    });
    const event = jobEventOf('W', line, at);
    expect(event && formatJobLine(event)).toBe(
      '10:00:00.000  dead-lettered  (not a job)  message m-9  after 1 attempt(s)  (EnvelopeError)',
    );
  });

  it('ignores what is not a record outcome: the batch summary, a job’s own lines, plain text', () => {
    expect(
      jobEventOf('W', JSON.stringify({ message: 'batch processed', outcome: 'batch', completed: 3 })),
    ).toBeUndefined();
    expect(jobEventOf('W', JSON.stringify({ message: 'greeted', jobType: 't', jobId: '1' }))).toBeUndefined();
    expect(jobEventOf('W', 'outcome: completed')).toBeUndefined();
    expect(jobEventOf('W', '{"outcome": "completed", broken')).toBeUndefined();
  });
});
