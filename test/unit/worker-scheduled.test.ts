/**
 * The worker's stage for jobs sent for later (lib/runtime/record/scheduled.ts), with a guard that
 * keeps their state in memory: a cancelled job is acknowledged without running and counted as
 * `JobCancelled` (not a failure, no dead letter); a superseded generation likewise
 * (`JobSuperseded`); an early one waits for its time; a started one runs; a job without `runat`
 * never asks.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEnvelope } from '../../lib/core/envelope.ts';
import type { ScheduledStart, ScheduledStartRequest } from '../../lib/runtime/idempotency/guard.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { FakeGuard } from '../factories/fake-guard.ts';
import { sqsRecord } from '../factories/sqs.ts';
import { failedIds, workerHarness } from '../factories/worker.ts';

/** The fake guard, keeping jobs sent for later: `answers` by envelope id. */
class SchedulingGuard extends FakeGuard {
  readonly starts: ScheduledStartRequest[] = [];
  readonly answers = new Map<string, ScheduledStart>();
  /** Ids whose state item exists (for a message far before its time). */
  readonly existing = new Set<string>();
  readonly existsAsked: string[] = [];
  async scheduledJobExists(_source: string, id: string): Promise<boolean> {
    this.existsAsked.push(id);
    return this.existing.has(id);
  }
  async startScheduledJob(request: ScheduledStartRequest): Promise<ScheduledStart> {
    this.starts.push(request);
    return this.answers.get(request.id) ?? 'started';
  }
}

function setup() {
  const ran: string[] = [];
  const job = defineJob({
    type: 'booking.expire-hold',
    queue: 'jobs',
    schema: z.object({ holdId: z.string() }),
    async run({ holdId }) {
      ran.push(holdId);
    },
  });
  const guard = new SchedulingGuard();
  const harness = workerHarness({ jobs: [job], idempotency: guard });
  return { ran, guard, harness };
}

function laterRecord(id: string, runAt: Date, generation = '1') {
  const envelope = createEnvelope({
    type: 'booking.expire-hold',
    source: '/checkout',
    id,
    data: { holdId: id },
    schedule: { runat: runAt.toISOString(), schedulegeneration: generation },
  });
  return sqsRecord({ body: JSON.stringify(envelope), messageId: `m-${id}` });
}

const past = () => new Date(Date.now() - 1000);

describe('a job sent for later, in the worker', () => {
  it('runs when its start succeeds, after one start asked with its identity and generation', async () => {
    const { ran, guard, harness } = setup();
    const { response } = await harness.invoke([laterRecord('h-1', past(), '3')]);
    expect(failedIds(response)).toEqual([]);
    expect(ran).toEqual(['h-1']);
    expect(guard.starts).toEqual([{ source: '/checkout', id: 'h-1', generation: 3, messageId: 'm-h-1' }]);
  });

  it('cancelled: not run, acknowledged (no failure, no dead letter), logged and counted as JobCancelled', async () => {
    const { ran, guard, harness } = setup();
    guard.answers.set('h-2', 'cancelled');
    const { response, logs, emf } = await harness.invoke([laterRecord('h-2', past())]);

    expect(ran).toEqual([]);
    expect(failedIds(response)).toEqual([]);
    expect(harness.sqs.calls).toEqual([]);
    expect(logs).toContainEqual(
      expect.objectContaining({
        message: 'job was cancelled before it ran: not run, message deleted',
        outcome: 'cancelled',
        jobId: 'h-2',
      }),
    );
    expect(emf.find((blob) => 'JobCancelled' in blob)).toMatchObject({
      JobCancelled: 1,
      JobType: 'booking.expire-hold',
    });
    expect(emf.some((blob) => 'JobDeadLettered' in blob)).toBe(false);
    expect(logs.find((line) => line.message === 'batch processed')).toMatchObject({
      cancelled: 1,
      retried: 0,
    });
  });

  it('superseded by a reschedule: not run, acknowledged, counted as JobSuperseded', async () => {
    const { ran, guard, harness } = setup();
    guard.answers.set('h-3', 'superseded');
    const { response, emf } = await harness.invoke([laterRecord('h-3', past())]);
    expect(ran).toEqual([]);
    expect(failedIds(response)).toEqual([]);
    expect(emf.find((blob) => 'JobSuperseded' in blob)).toMatchObject({ JobSuperseded: 1 });
  });

  it('early: waits until its time (visibility), without asking the store or running', async () => {
    const { ran, guard, harness } = setup();
    const record = laterRecord('h-4', new Date(Date.now() + 30_000));
    const { response } = await harness.invoke([record]);
    expect(ran).toEqual([]);
    expect(guard.starts).toEqual([]);
    expect(guard.existsAsked).toEqual([]);
    expect(failedIds(response)).toEqual(['m-h-4']);
    const [change] = harness.sqs.calls;
    expect(change).toMatchObject({ action: 'ChangeMessageVisibility' });
    const seconds = (change as { input: { VisibilityTimeout: number } }).input.VisibilityTimeout;
    expect(seconds).toBeGreaterThanOrEqual(29);
    expect(seconds).toBeLessThanOrEqual(30);
  });

  it('hand-made runat months ahead with no state item: dead-lettered at once with ScheduledStateMissing, not left to burn receives', async () => {
    const { ran, guard, harness } = setup();
    const record = laterRecord('h-far', new Date(Date.now() + 90 * 86_400_000));
    const { response, logs } = await harness.invoke([record]);
    expect(ran).toEqual([]);
    expect(failedIds(response)).toEqual([]);
    expect(guard.starts).toEqual([]);
    const attributes = harness.sqs.sentTo(harness.dlqUrl)[0]?.MessageAttributes;
    expect(attributes?.ErrorName?.StringValue).toBe('ScheduledStateMissing');
    expect(logs).toContainEqual(
      expect.objectContaining({
        message: 'job sent for later has no state and is far from due: dead-lettered',
      }),
    );
  });

  it('far ahead with its state item (a real job sent for later): waits, up to 12 hours a receive', async () => {
    const { ran, guard, harness } = setup();
    guard.existing.add('h-real');
    const { response } = await harness.invoke([laterRecord('h-real', new Date(Date.now() + 2 * 86_400_000))]);
    expect(ran).toEqual([]);
    expect(failedIds(response)).toEqual(['m-h-real']);
    expect(harness.sqs.sentTo(harness.dlqUrl)).toEqual([]);
    const [change] = harness.sqs.calls;
    expect((change as { input: { VisibilityTimeout: number } }).input.VisibilityTimeout).toBe(43_200);
  });

  it('missing state (expired, or never written): runs, with a warning', async () => {
    const { ran, guard, harness } = setup();
    guard.answers.set('h-5', 'missing');
    const { logs } = await harness.invoke([laterRecord('h-5', past())]);
    expect(ran).toEqual(['h-5']);
    expect(logs).toContainEqual(expect.objectContaining({ level: 'WARN', jobId: 'h-5' }));
  });

  it('an ordinary job (no runat) never asks for a start', async () => {
    const { ran, guard, harness } = setup();
    const body = JSON.stringify(
      createEnvelope({ type: 'booking.expire-hold', source: '/checkout', data: { holdId: 'now' } }),
    );
    await harness.invoke([sqsRecord({ body })]);
    expect(ran).toEqual(['now']);
    expect(guard.starts).toEqual([]);
  });
});
