/**
 * lib/core/scheduler-context.ts: the context attributes EventBridge Scheduler substitutes in a
 * target's Input, in AWS's formats, and the operator's scheduled time that never collides.
 */
import { describe, expect, it } from 'vitest';
import { parseEnvelope } from '../../lib/core/envelope.ts';
import {
  isManualScheduledTime,
  manualScheduledTime,
  scheduledTimeText,
  substituteContextAttributes,
} from '../../lib/core/scheduler-context.ts';

const context = {
  scheduleArn: 'arn:aws:scheduler:eu-central-1:123456789012:schedule/jobs/nightly',
  scheduledTime: '2026-12-01T22:00:00Z',
  executionId: 'd32c5kddcf5bb8c3',
  attemptNumber: 2,
};

describe('scheduler context attributes', () => {
  it('writes a scheduled time as AWS does: UTC, whole seconds, Z', () => {
    expect(scheduledTimeText(new Date('2026-12-01T22:00:00.999Z'))).toBe('2026-12-01T22:00:00Z');
  });

  it('substitutes every occurrence of the four documented keywords and nothing else', () => {
    const input =
      '<aws.scheduler.schedule-arn>|<aws.scheduler.scheduled-time>|<aws.scheduler.scheduled-time>|<aws.scheduler.execution-id>|<aws.scheduler.attempt-number>|<aws.scheduler.other>';
    expect(substituteContextAttributes(input, context)).toBe(
      'arn:aws:scheduler:eu-central-1:123456789012:schedule/jobs/nightly|2026-12-01T22:00:00Z|2026-12-01T22:00:00Z|d32c5kddcf5bb8c3|2|<aws.scheduler.other>',
    );
  });

  it("gives an operator's firing a valid envelope time that never equals a real firing's", () => {
    const now = new Date('2026-12-01T22:00:00.000Z');
    const manual = manualScheduledTime(now);
    expect(manual).toBe('2026-12-01T22:00:00.000Z');
    expect(manual).not.toBe(scheduledTimeText(now));
    expect(isManualScheduledTime(manual)).toBe(true);
    expect(isManualScheduledTime(scheduledTimeText(now))).toBe(false);
    const body = substituteContextAttributes(
      JSON.stringify({
        specversion: '1.0',
        id: 'nightly@<aws.scheduler.scheduled-time>',
        source: '/schedules/nightly',
        type: 'invoices.nightly',
        time: '<aws.scheduler.scheduled-time>',
        datacontenttype: 'application/json',
        data: {},
      }),
      { ...context, scheduledTime: manual },
    );
    expect(parseEnvelope(body)).toMatchObject({ id: `nightly@${manual}`, time: manual });
  });
});
