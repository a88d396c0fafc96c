/**
 * The local runtime's EventBridge Scheduler end to end, on a stack synthesized here: a JobQueue
 * running test/fixtures/scheduled-worker.ts (a real sqs-jobs worker with idempotency on dynalite),
 * a schedule group and two recurring schedules declared as CloudFormation resources next to it
 * (the construct engineer's JobQueue will make these itself; this template is the test's own).
 * Time is a manual clock: the night comes when the test says so, nothing sleeps.
 *
 * What a user sees: the nightly schedule fires at 23:00 Berlin time into the queue with its
 * envelope substituted, a firing delivered twice runs once, a disabled schedule never fires, a
 * one-time schedule made with @aws-sdk/client-scheduler against the runtime's endpoint fires once
 * and deletes itself, an operator's "fire now" runs as a job of its own.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CreateScheduleCommand,
  GetScheduleCommand,
  ResourceNotFoundException,
  SchedulerClient,
} from '@aws-sdk/client-scheduler';
import { App, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyTable } from '../../lib/constructs/idempotency-table.ts';
import { JobQueue } from '../../lib/constructs/job-queue.ts';
import type { InvocationReport } from '../../lib/local/event-source-mapping.ts';
import { type LocalRuntime, startLocalRuntime } from '../../lib/local/runtime.ts';
import { ManualClock } from '../../lib/local/scheduler/index.ts';
import { removeDir, tempOutdir } from '../infra/helpers.ts';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** 1 December 2026, noon UTC: Berlin is on CET (UTC+1), so 23:00 there is 22:00 UTC. */
const clock = new ManualClock(Date.parse('2026-12-01T12:00:00Z'));

let outdir: string;
let rt: LocalRuntime;
const runs: Record<string, unknown>[] = [];
const reports: InvocationReport[] = [];

/** The body of a job envelope as the schedule's Input: the firing's identity comes from Scheduler. */
function envelopeInput(name: string, run: string): string {
  return JSON.stringify({
    specversion: '1.0',
    id: `${name}@<aws.scheduler.scheduled-time>`,
    source: '/schedules/nightly',
    type: 'invoices.nightly',
    time: '<aws.scheduler.scheduled-time>',
    datacontenttype: 'application/json',
    data: { run },
  });
}

function synthesize(dir: string): void {
  const app = new App({ outdir: dir });
  const stack = new Stack(app, 'SchedStack');
  const table = new IdempotencyTable(stack, 'Idempotency');
  const jobs = new JobQueue(stack, 'Nightly', {
    name: 'nightly',
    entry: 'test/fixtures/scheduled-worker.ts',
    projectRoot: PROJECT_ROOT,
    maxAttempts: 3,
    jobTimeoutSeconds: 5,
    idempotencyTable: table.table,
    alarmTopic: false,
  });
  const role = new iam.Role(stack, 'SchedulerRole', {
    assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com'),
  });
  const group = new scheduler.CfnScheduleGroup(stack, 'Group', { name: 'nightly-group' });
  const target = (name: string, run: string) => ({
    arn: jobs.queue.queueArn,
    roleArn: role.roleArn,
    input: envelopeInput(name, run),
  });
  new scheduler.CfnSchedule(stack, 'NightlyInvoices', {
    name: 'nightly-invoices',
    groupName: group.ref,
    scheduleExpression: 'cron(0 23 * * ? *)',
    scheduleExpressionTimezone: 'Europe/Berlin',
    flexibleTimeWindow: { mode: 'OFF' },
    target: target('nightly-invoices', 'nightly'),
  });
  new scheduler.CfnSchedule(stack, 'Paused', {
    name: 'paused',
    groupName: group.ref,
    scheduleExpression: 'rate(1 minute)',
    state: 'DISABLED',
    flexibleTimeWindow: { mode: 'OFF' },
    target: target('paused', 'paused'),
  });
  app.synth();
}

const ranAs = (jobId: string) => runs.filter((l) => l.jobId === jobId);
const received = (messageId: string) => reports.filter((r) => r.messageIds.includes(messageId)).length;

beforeAll(async () => {
  outdir = tempOutdir('scheduler');
  synthesize(outdir);
  rt = await startLocalRuntime({
    assemblyDir: outdir,
    synthesize: 'never',
    env: {},
    receiveWaitTimeSeconds: 1,
    prewarm: true,
    scheduler: { clock },
    onInvocation: (r) => reports.push(r),
    functionLogs: (line) => {
      try {
        const parsed = JSON.parse(line.line) as Record<string, unknown>;
        if (parsed.message === 'nightly invoices ran') runs.push(parsed);
      } catch {
        // not a JSON line
      }
    },
  });
}, 120_000);

afterAll(async () => {
  await rt?.stop();
  removeDir(outdir);
});

/** Moves the clock, then waits for the firings to be delivered and the worker to finish them. */
async function nightFallsAt(iso: string): Promise<void> {
  clock.advanceTo(Date.parse(iso));
  await rt.scheduler.idle();
  await rt.waitUntilDrained({ timeoutMs: 60_000 });
}

describe('the local runtime fires the schedules of its template', () => {
  it('plans the nightly schedule at 23:00 Berlin time and points the functions at the Scheduler', () => {
    expect(rt.scheduler.planned().get('nightly-group/nightly-invoices')).toBe(
      Date.parse('2026-12-01T22:00:00Z'),
    );
    expect(rt.scheduler.planned().has('nightly-group/paused')).toBe(false);
    expect(rt.worker('nightly').env.AWS_ENDPOINT_URL_SCHEDULER).toBe(rt.endpoints.scheduler);
  });

  it('fires it into the queue with the substituted envelope; delivered twice, the job runs once', async () => {
    rt.scheduler.duplicateNextFirings(1);
    await nightFallsAt('2026-12-01T22:00:00Z');
    const firing = rt.scheduler.firings().find((f) => f.name === 'nightly-invoices' && !f.manual);
    expect(firing).toMatchObject({ scheduledTime: '2026-12-01T22:00:00Z', copies: 2, outcome: 'delivered' });
    // Both copies reached the queue and the worker...
    expect(firing?.messageIds).toHaveLength(2);
    for (const id of firing?.messageIds ?? []) expect(received(id)).toBeGreaterThanOrEqual(1);
    // ...and the job ran once, as the firing's identity.
    expect(ranAs('nightly-invoices@2026-12-01T22:00:00Z')).toHaveLength(1);
    expect(rt.scheduler.stats()).toMatchObject({ fired: 1, deliveredTwice: 1 });
    expect(rt.scheduler.planned().get('nightly-group/nightly-invoices')).toBe(
      Date.parse('2026-12-02T22:00:00Z'),
    );
  });

  it('never fires the DISABLED schedule', () => {
    expect(rt.scheduler.firings().filter((f) => f.name === 'paused')).toEqual([]);
    expect(runs.filter((l) => l.run === 'paused')).toEqual([]);
  });

  it('fires a one-time schedule made with @aws-sdk/client-scheduler once, and deletes it', async () => {
    const client = new SchedulerClient({
      endpoint: rt.endpoints.scheduler,
      region: rt.region,
      credentials: rt.credentials,
    });
    try {
      await client.send(
        new CreateScheduleCommand({
          Name: 'sj-once',
          ScheduleExpression: 'at(2026-12-01T22:30:00)',
          ScheduleExpressionTimezone: 'UTC',
          ActionAfterCompletion: 'DELETE',
          FlexibleTimeWindow: { Mode: 'OFF' },
          Target: {
            Arn: rt.queue('nightly').arn,
            RoleArn: 'arn:aws:iam::000000000000:role/scheduler',
            Input: envelopeInput('sj-once', 'once'),
          },
        }),
      );
      await nightFallsAt('2026-12-01T22:30:00Z');
      expect(ranAs('sj-once@2026-12-01T22:30:00Z')).toHaveLength(1);
      await expect(client.send(new GetScheduleCommand({ Name: 'sj-once' }))).rejects.toBeInstanceOf(
        ResourceNotFoundException,
      );
    } finally {
      client.destroy();
    }
  });

  it("fires the nightly schedule now, as an operator would: a job of its own, not tonight's", async () => {
    const record = await rt.scheduler.fireNow('nightly-invoices', { groupName: 'nightly-group' });
    await rt.waitUntilDrained({ timeoutMs: 60_000 });
    expect(record.scheduledTime).toBe(new Date(clock.now()).toISOString());
    expect(ranAs(`nightly-invoices@${record.scheduledTime}`)).toHaveLength(1);
    // The real firing's job is untouched: still one run.
    expect(ranAs('nightly-invoices@2026-12-01T22:00:00Z')).toHaveLength(1);
  });
});
