/**
 * The Input of a recurring job's schedule is checked at synth on the exact text the schedule
 * carries: its envelope `source` is `/sqs-jobs/schedules/<stack>-<queue>` (the schedule group),
 * so a longer stack or queue name leaves less room for data. EventBridge Scheduler refuses an
 * Input above 256 KB (CreateSchedule API, Target.Input) at deploy; synth must refuse exactly what
 * deploy would. Bundling is skipped (none of this depends on the worker's code).
 */
import { App, Stack } from 'aws-cdk-lib';
import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_SCHEDULED_MESSAGE_BYTES } from '../../lib/client/prepare.ts';
import { JobsConfigError } from '../../lib/constructs/errors.ts';
import { IdempotencyTable } from '../../lib/constructs/idempotency-table.ts';
import { JobQueue, type RecurringJob } from '../../lib/constructs/job-queue.ts';
import { PROJECT_ROOT } from './helpers.ts';

type Synth =
  | { readonly ok: true; readonly input: string; readonly source: string }
  | { readonly ok: false; readonly problems: readonly string[] };

const nightly = (data: unknown): RecurringJob => ({
  name: 'nightly',
  job: 'billing.issue-invoices',
  schedule: 'cron(0 23 * * ? *)',
  timeZone: 'UTC',
  data,
});

/** Synthesizes queue `queueName` in stack `stackName` with one recurring job (by props or by addRecurringJob). */
function synth(
  stackName: string,
  queueName: string,
  data: unknown,
  how: 'props' | 'add' = 'props',
  maxMessageSizeBytes?: number,
): Synth {
  const stack = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), stackName);
  const table = new IdempotencyTable(stack, 'Idempotency');
  try {
    const q = new JobQueue(stack, 'Q', {
      name: queueName,
      entry: 'test/fixtures/worker-handler.ts',
      projectRoot: PROJECT_ROOT,
      idempotencyTable: table.table,
      alarmTopic: false,
      maxMessageSizeBytes,
      jobs: [
        { type: 'billing.issue-invoices', queue: queueName, retry: { maxAttempts: 3 }, timeoutSeconds: 5 },
      ],
      ...(how === 'props' ? { recurringJobs: [nightly(data)] } : {}),
    });
    if (how === 'add') q.addRecurringJob(nightly(data));
  } catch (e) {
    if (e instanceof JobsConfigError) return { ok: false, problems: e.problems };
    throw e;
  }
  const resources = App.of(stack)!.synth().getStackByName(stackName).template.Resources as Record<
    string,
    { Type: string; Properties: { Target: { Input: string } } }
  >;
  const schedule = Object.values(resources).find((r) => r.Type === 'AWS::Scheduler::Schedule')!;
  const input = schedule.Properties.Target.Input;
  return { ok: true, input, source: (JSON.parse(input) as { source: string }).source };
}

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/** The data whose schedule Input is exactly `targetBytes` in stack/queue: one string field filled with 'x'. */
function dataOfInputBytes(stackName: string, queueName: string, targetBytes: number): { blob: string } {
  const probe = synth(stackName, queueName, { blob: '' });
  if (!probe.ok) throw new Error(probe.problems.join('\n'));
  return { blob: 'x'.repeat(targetBytes - bytes(probe.input)) };
}

describe("a recurring job's Input at EventBridge Scheduler's 256 KB limit", () => {
  it('the Input in the template carries the real source, /sqs-jobs/schedules/<stack>-<queue>', () => {
    const done = synth('Billing', 'invoices', { batch: 'all' });
    expect(done.ok && done.source).toBe('/sqs-jobs/schedules/Billing-invoices');
  });

  it('exactly at the limit synthesizes (that Input, byte for byte); one byte over is refused with its size, the limit and the AWS page', () => {
    // A long stack name: the source is 40 bytes longer than a placeholder's would be.
    const stackName = `Billing${'X'.repeat(40)}`;
    const atLimit = dataOfInputBytes(stackName, 'invoices', MAX_SCHEDULED_MESSAGE_BYTES);
    const done = synth(stackName, 'invoices', atLimit);
    expect(done.ok).toBe(true);
    if (done.ok) expect(bytes(done.input)).toBe(262_144);

    const over = synth(stackName, 'invoices', { blob: `${atLimit.blob}x` });
    expect(over).toEqual({
      ok: false,
      problems: [
        "recurringJobs['nightly']: the schedule's Input (the message of every firing) is 262145 bytes, above EventBridge Scheduler's Input limit of 262144 bytes (256 KB; CreateSchedule API, Target.Input: https://docs.aws.amazon.com/scheduler/latest/APIReference/API_Target.html); 1 byte too many: keep ids in data and let the job load the rest",
      ],
    });
    // addRecurringJob checks the same text.
    expect(synth(stackName, 'invoices', { blob: `${atLimit.blob}x` }, 'add')).toEqual(over);
    expect(synth(stackName, 'invoices', atLimit, 'add').ok).toBe(true);
  });

  it('for any stack and queue name and multi-byte data: at the limit passes, one byte over fails, the message giving the Input size', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Z][A-Za-z0-9]{0,60}$/),
        fc.stringMatching(/^[a-z][a-z0-9]{0,30}$/),
        fc.constantFrom('x', 'é', '€', '😀'),
        (stackName, queueName, unit) => {
          // Fill with multi-byte characters up to the limit, then finish with 1-byte 'x's.
          const probe = synth(stackName, queueName, { blob: '' });
          if (!probe.ok) throw new Error(probe.problems.join('\n'));
          const room = MAX_SCHEDULED_MESSAGE_BYTES - bytes(probe.input);
          const wide = Math.floor(room / bytes(unit));
          const blob = unit.repeat(wide) + 'x'.repeat(room - wide * bytes(unit));
          const at = synth(stackName, queueName, { blob });
          expect(at.ok && bytes(at.input)).toBe(MAX_SCHEDULED_MESSAGE_BYTES);
          const over = synth(stackName, queueName, { blob: `${blob}x` });
          expect(over.ok).toBe(false);
          if (!over.ok)
            expect(over.problems).toEqual([
              expect.stringContaining(
                `is ${MAX_SCHEDULED_MESSAGE_BYTES + 1} bytes, above EventBridge Scheduler's Input limit of ${MAX_SCHEDULED_MESSAGE_BYTES} bytes`,
              ),
            ]);
        },
      ),
      { numRuns: 5 },
    );
  });

  it("a firing larger than the queue's maxMessageSizeBytes is refused, measured on the firing as delivered (its scheduled time filled in)", () => {
    const probe = synth('Billing', 'invoices', { blob: '' });
    if (!probe.ok) throw new Error(probe.problems.join('\n'));
    // '<aws.scheduler.scheduled-time>' (30 bytes) twice in the Input becomes '2026-01-01T00:00:00Z' (20).
    const firingBytes = bytes(probe.input) - 20;
    const fits = synth('Billing', 'invoices', { blob: 'x'.repeat(1024 - firingBytes) }, 'props', 1024);
    expect(fits.ok).toBe(true);
    expect(synth('Billing', 'invoices', { blob: 'x'.repeat(1025 - firingBytes) }, 'props', 1024)).toEqual({
      ok: false,
      problems: [
        "recurringJobs['nightly']: the message of a firing is 1025 bytes, above the queue's maxMessageSizeBytes (1024): keep ids in data, not documents",
      ],
    });
  });
});
