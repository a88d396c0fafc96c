/**
 * The text of `sqs-jobs schedules` that needs no emulator: what a Scheduler error tells the
 * operator to check, times in UTC and a zone, and each answer of a cancel.
 */
import { describe, expect, it } from 'vitest';
import { schedulerError } from '../../lib/ops/schedule-reads.ts';
import { bothTimes, renderCancel, renderSchedulesList } from '../../lib/ops/schedules-format.ts';

const named = (name: string, message: string, code?: string) =>
  Object.assign(new Error(message), { name, ...(code === undefined ? {} : { code }) });

describe('schedulerError', () => {
  it('says what to check: the endpoint, the region, credentials, permissions, or the group of a missing schedule', () => {
    expect(
      schedulerError(named('Error', 'connect ECONNREFUSED', 'ECONNREFUSED'), 'http://127.0.0.1:9', 'list')
        .message,
    ).toContain('check --scheduler-endpoint (or AWS_ENDPOINT_URL_SCHEDULER');
    expect(schedulerError(named('Error', 'Region is missing'), undefined, 'list').message).toContain(
      'give --region (or set AWS_REGION)',
    );
    expect(
      schedulerError(
        named('CredentialsProviderError', 'Could not load credentials from any providers'),
        undefined,
        'list',
      ).message,
    ).toContain('configure AWS credentials');
    expect(
      schedulerError(named('AccessDeniedException', 'not authorized'), undefined, 'list').message,
    ).toContain('scheduler:ListSchedules');
    const missing = schedulerError(
      named('ResourceNotFoundException', 'Schedule x does not exist.'),
      undefined,
      'fire x',
    );
    expect(missing.code).toBe('ScheduleNotFound');
    expect(missing.message).toBe(
      'fire x: not found on AWS (Schedule x does not exist.); check --group and the region',
    );
  });
});

describe('schedules text', () => {
  it('writes an instant in UTC and in a zone, with daylight saving', () => {
    expect(bothTimes('2026-07-01T21:00:00.000Z', 'Europe/Berlin')).toBe(
      '2026-07-01T21:00:00Z (2026-07-01 23:00:00 Europe/Berlin)',
    );
    expect(bothTimes('2026-12-01T22:00:00.000Z', 'Europe/Berlin')).toBe(
      '2026-12-01T22:00:00Z (2026-12-01 23:00:00 Europe/Berlin)',
    );
    expect(bothTimes('2026-12-01T22:00:00.000Z', 'UTC')).toBe('2026-12-01T22:00:00Z');
  });

  it('says what each cancel answer means for the job', () => {
    const base = { id: 'hold-1', queue: 'holds', runAt: '2026-12-01T22:00:00.000Z' };
    expect(
      renderCancel({ ...base, status: 'cancelled', scheduleDeleted: false, type: 'booking.expire-hold' }),
    ).toContain('it will not run; a message of it that still arrives is recorded as cancelled');
    expect(renderCancel({ ...base, status: 'already-started' })).toContain('too late to cancel');
    expect(renderCancel({ ...base, status: 'already-cancelled' })).toContain('was already cancelled');
    expect(renderCancel({ id: 'x', queue: '', status: 'not-found' })).toContain(
      'no job sent for later with id x',
    );
  });
});

describe('schedules list heading', () => {
  it('names UTC once when the local zone is UTC (TZ unset), both zones otherwise', () => {
    const list = { groups: ['g'], pending: [], recurring: [], notes: [] };
    expect(renderSchedulesList(list, 'UTC')).toContain('earliest first, times in UTC:');
    expect(renderSchedulesList(list, 'UTC')).not.toContain('UTC and UTC');
    expect(renderSchedulesList(list, 'Europe/Berlin')).toContain('times in UTC and Europe/Berlin:');
  });
});
