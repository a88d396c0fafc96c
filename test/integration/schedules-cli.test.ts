/**
 * `sqs-jobs schedules list|show|cancel|fire` against the local EventBridge Scheduler emulator (on
 * a manual clock: the test moves time, nothing sleeps), fauxqs and dynalite, as an operator runs it:
 * jobs sent for later by the real `JobClient`, a recurring schedule fired by its clock and by an
 * operator, each firing run by the real worker, and what the command prints about all of it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateScheduleCommand, GetScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { JobClient } from '../../lib/client/job-client.ts';
import { ConsoleBackend } from '../../lib/console/backend.ts';
import { localDescriptionSetup } from '../../lib/console/local.ts';
import { nextFirings, wallClockOf } from '../../lib/core/schedule-expression.ts';
import { ManualClock, type SchedulerEmulator } from '../../lib/local/scheduler/index.ts';
import type { WorkerHandler } from '../../lib/runtime/worker.ts';
import { runCli } from '../factories/cli.ts';
import type { EmulatedQueue, EmulatedSqs } from '../factories/emulated-sqs.ts';
import {
  expireHold,
  nightlyWorker,
  region,
  runBillingQueue,
  type SchedulesWorld,
  startSchedulesWorld,
} from '../factories/schedules-world.ts';
import type { DynaliteHandle } from '../support/dynalite.ts';

const GROUP = 'it-billing';
/** The Scheduler's clock starts at the real time: JobClient decides how a job travels by the real clock. */
const START = Date.now();
/** When each job sent for later is due: one as a schedule in 3 days, one as a delayed SQS message. */
const HOLD_1_AT = new Date(START + 3 * 86_400_000);
const HOLD_2_AT = new Date(START + 5 * 60_000);
/** The recurring schedule's next two firings (23:00 in Berlin). */
const [NEXT_1, NEXT_2] = nextFirings('cron(0 23 * * ? *)', {
  timeZone: 'Europe/Berlin',
  after: new Date(START),
  count: 2,
}) as [Date, Date];
/** An instant as the command prints it: UTC and the wall clock of `zone`. */
const both = (at: Date, zone: string) =>
  `${at.toISOString().slice(0, 19)}Z (${wallClockOf(at, zone).replace('T', ' ')} ${zone})`;
const SOURCE = '/services/booking';

let world: SchedulesWorld;
let emulator: EmulatedSqs;
let db: DynaliteHandle;
let tableName: string;
let scheduler: SchedulerEmulator;
let schedulerClient: SchedulerClient;
let queue: EmulatedQueue;
let holds: EmulatedQueue;
let dlq: EmulatedQueue;
let handler: WorkerHandler;
let client: JobClient;
const clock = new ManualClock(START);
const ran: string[] = [];

/** `sqs-jobs schedules <args>` pointed at the three emulators, its clock at the scheduler's. */
function schedules(args: readonly string[]) {
  return runCli(
    [
      'schedules',
      ...args,
      '--scheduler-endpoint',
      scheduler.url,
      '--endpoint',
      emulator.endpoint,
      '--dynamodb-endpoint',
      db.endpoint,
      '--idempotency-table',
      tableName,
      '--time-zone',
      'America/New_York',
    ],
    emulator.endpoint,
    { nowMs: () => clock.now() },
  );
}

/** Runs every message on the queue through the worker (the event source mapping's part). */
const runQueue = (expected: number) => runBillingQueue(world, handler, expected);

beforeAll(async () => {
  world = await startSchedulesWorld({
    group: GROUP,
    clock,
    source: SOURCE,
    nightlyData: { run: 'nightly' },
    nightlyRetries: true,
  });
  ({ emulator, db, tableName, queue, dlq, holds, scheduler, schedulerClient, client } = world);
  handler = nightlyWorker(world, {
    schema: z.object({ run: z.string() }),
    handlerVersion: 'it-schedules',
    ran,
  });
  await client.send(
    expireHold,
    { holdId: 'h-1' },
    { id: 'hold-h-1', partitionKey: 'tenant-7', runAt: HOLD_1_AT },
  );
  await client.send(expireHold, { holdId: 'h-2' }, { id: 'hold-h-2', runAt: HOLD_2_AT });
});

afterAll(async () => {
  await world?.stop();
});

describe('sqs-jobs schedules', () => {
  it('list: pending jobs (when in UTC and the operator zone, which job, for whom, how) and the recurring schedule with its next firings in its own zone', async () => {
    const { code, stdout, stderr } = await schedules(['list', '--next', '2']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('pending one-time jobs (2), earliest first, times in UTC and America/New_York:');
    expect(stdout).toContain(
      `  ${both(HOLD_2_AT, 'America/New_York')}  booking.expire-hold  id hold-h-2 (source ${SOURCE}, queue holds, via SQS delay)`,
    );
    expect(stdout).toMatch(
      new RegExp(
        `  ${both(HOLD_1_AT, 'America/New_York').replace(/[()]/g, '\\$&')} {2}booking\\.expire-hold for tenant-7 {2}id hold-h-1 \\(source /services/booking, queue holds, via schedule sj-[0-9a-f]{56}\\)`,
      ),
    );
    expect(stdout).toContain(
      `  ${GROUP}/nightly-invoices: cron(0 23 * * ? *) in Europe/Berlin, ENABLED, job billing.nightly-invoices → queue ${queue.arn.split(':')[5]}`,
    );
    expect(stdout).toContain(`    next: ${both(NEXT_1, 'Europe/Berlin')}, ${both(NEXT_2, 'Europe/Berlin')}`);
  });

  it('list --json gives the same as data', async () => {
    const { code, stdout } = await schedules(['list', '--json', '--next', '1']);
    expect(code).toBe(0);
    const json = JSON.parse(stdout) as {
      pending: { jobId: string; via: string; state: string }[];
      recurring: { name: string; nextFirings: { at: string; local: string }[] }[];
    };
    expect(json.pending.map((p) => [p.jobId, p.via, p.state])).toEqual([
      ['hold-h-2', 'delay', 'pending'],
      ['hold-h-1', 'schedule', 'pending'],
    ]);
    expect(json.recurring).toEqual([
      expect.objectContaining({
        name: 'nightly-invoices',
        nextFirings: [{ at: NEXT_1.toISOString(), local: expect.stringMatching(/T23:00:00$/) }],
      }),
    ]);
  });

  it('fire: sends the job now with an id of its own, which never collides with the real firing; show lists both firings and where each went', async () => {
    const fired = await schedules(['fire', 'nightly-invoices']);
    expect(fired.stderr).toBe('');
    expect(fired.code).toBe(0);
    const manualId = `nightly-invoices@${new Date(START).toISOString()}`;
    expect(fired.stdout).toContain(
      `fired nightly-invoices now: sent job ${manualId} to ${new URL(emulator.endpoint).origin}/`,
    );
    expect(fired.stdout).toContain('never collides with the schedule');

    // The real firing, at 23:00 Berlin; then the worker runs both.
    clock.advanceTo(NEXT_1.getTime());
    await scheduler.idle();
    await runQueue(2);
    const realId = `nightly-invoices@${NEXT_1.toISOString().slice(0, 19)}Z`;
    expect(ran.sort()).toEqual([manualId, realId].sort());

    const shown = await schedules(['show', 'nightly-invoices', '--next', '1']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`  target:      ${queue.arn}`);
    expect(shown.stdout).toContain(
      `  retries:     3 attempts within 3600 s, then dead-letter queue ${dlq.arn}`,
    );
    expect(shown.stdout).toContain(`  next: ${both(NEXT_2, 'Europe/Berlin')}`);
    expect(shown.stdout).toContain('  recent firings (2), newest first');
    expect(shown.stdout).toContain(`    ${realId}: done, attempt 1, ended `);
    expect(shown.stdout).toMatch(
      new RegExp(`${manualId.replaceAll('.', '\\.')} \\(fired by an operator\\): done, attempt 1`),
    );
  });

  it('show <job id>: the state item (pending, generation) and its one-time schedule', async () => {
    const { code, stdout } = await schedules(['show', 'hold-h-1']);
    expect(code).toBe(0);
    expect(stdout).toContain('job sent for later hold-h-1:');
    expect(stdout).toContain('  state:       pending, generation 1');
    expect(stdout).toContain('  job:         booking.expire-hold for tenant-7');
    expect(stdout).toMatch(/ {2}via: {9}one-time schedule sj-[0-9a-f]{56}/);
    expect(stdout).toContain(
      `  expression:  at(${new Date(Math.ceil(HOLD_1_AT.getTime() / 1000) * 1000).toISOString().slice(0, 19)}) in UTC, ENABLED`,
    ); // A delivery Scheduler gives up on lands in the schedule DLQ, not dropped.
    expect(stdout).toContain(`s, then dead-letter queue ${dlq.arn}`);
    expect(stdout).not.toContain('no dead-letter queue');
  });

  it('cancel: cancels a pending job and deletes its schedule; again: already cancelled; an unknown id: not found (exit 1)', async () => {
    const cancelled = await schedules(['cancel', 'hold-h-1']);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toContain(
      `cancelled job hold-h-1 (booking.expire-hold on queue holds, due ${HOLD_1_AT.toISOString()}): it will not run; its schedule was deleted`,
    );
    const listed = await schedules(['list']);
    expect(listed.stdout).toContain('pending one-time jobs (1)');
    expect(listed.stdout).not.toContain('hold-h-1');
    const name = (
      JSON.parse((await schedules(['show', 'hold-h-1', '--json'])).stdout) as {
        state: { scheduleName: string };
      }
    ).state.scheduleName;
    await expect(
      schedulerClient.send(new GetScheduleCommand({ Name: name, GroupName: GROUP })),
    ).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
    });

    const again = await schedules(['cancel', 'hold-h-1', '--source', SOURCE]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('job hold-h-1 was already cancelled');

    // Ids are unique per source: two jobs with one id are not cancelled by guess.
    const other = new JobClient({
      source: '/services/other',
      queueUrls: { holds: holds.url },
      sqs: emulator.sqs,
      dynamodb: db.client,
      scheduler: schedulerClient,
      scheduling: { idempotencyTableName: tableName },
    });
    await other.send(expireHold, { holdId: 'h-2' }, { id: 'hold-h-2', delayMs: 60_000 });
    const ambiguousShow = await schedules(['show', 'hold-h-2']);
    expect(ambiguousShow.code).toBe(2);
    expect(ambiguousShow.stdout).toBe('');
    expect(ambiguousShow.stderr).toContain('several jobs sent for later have the id hold-h-2');
    expect(ambiguousShow.stderr).toContain("give the job's --source");
    const shownOne = await schedules(['show', 'hold-h-2', '--source', '/services/other']);
    expect(shownOne.code).toBe(0);
    expect(shownOne.stdout).toContain('/services/other');
    const ambiguous = await schedules(['cancel', 'hold-h-2']);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain('several jobs sent for later have the id hold-h-2');
    expect(ambiguous.stderr).toContain("give the job's --source");
    const chosen = await schedules(['cancel', 'hold-h-2', '--source', '/services/other']);
    expect(chosen.code).toBe(0);
    expect(chosen.stdout).toContain('cancelled job hold-h-2');

    const unknown = await schedules(['cancel', 'no-such-job']);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toContain('no job sent for later with id no-such-job');
  });

  it('finds the endpoints as sqs-jobs local prints them: --local <its JSON>, or AWS_ENDPOINT_URL_SCHEDULER', async () => {
    const description = {
      stackName: 'It',
      region,
      endpoints: { sqs: emulator.endpoint, dynamodb: db.endpoint, scheduler: scheduler.url },
      queues: [],
      tables: [{ logicalId: 'IdempotencyTable1234', name: tableName }],
      workers: [],
      warnings: [],
    };
    const dir = mkdtempSync(join(tmpdir(), 'schedules-cli-'));
    const file = join(dir, 'local.json');
    writeFileSync(file, `${JSON.stringify(description)}\n`);
    const local = await runCli(['schedules', 'list', '--local', file, '--json'], emulator.endpoint);
    rmSync(dir, { recursive: true, force: true });
    // The console over the same description (sqs-jobs console --local) reads the same schedules.
    const setup = localDescriptionSetup(description);
    const view = await new ConsoleBackend(setup).schedules();
    await setup.close?.();
    expect(view.available).toBe(true);
    expect(view.recurring.map((r) => r.name)).toContain('nightly-invoices');
    expect(local.stderr).toBe('');
    const listed = JSON.parse(local.stdout) as {
      groups: string[];
      pending: unknown[];
      recurring: { name: string }[];
    };
    expect(listed.groups).toEqual([GROUP]);
    expect(listed.recurring.map((r) => r.name)).toContain('nightly-invoices');
    expect(listed.pending.length).toBeGreaterThan(0);

    const fromEnv = await runCli(['schedules', 'show', 'nightly-invoices'], emulator.endpoint, {
      env: { AWS_ENDPOINT_URL_SCHEDULER: scheduler.url },
    });
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stdout).toContain('recurring schedule nightly-invoices:');
    expect(fromEnv.stdout).toContain('note: recent firings need the idempotency table (--idempotency-table)');
  });

  it('bad input gets one clear line and exit code 2', async () => {
    const missing = await schedules(['fire', 'no-such-schedule']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: fire schedule it-billing\/no-such-schedule: not found at http/);

    const zone = await runCli(
      ['schedules', 'list', '--scheduler-endpoint', scheduler.url, '--time-zone', 'Mars/Olympus'],
      emulator.endpoint,
    );
    expect(zone.code).toBe(2);
    expect(zone.stderr).toContain('error: --time-zone: "Mars/Olympus" is not an IANA time zone');

    const show = await schedules(['show', 'nothing-here']);
    expect(show.code).toBe(1);
    expect(show.stderr).toContain(
      `no schedule nothing-here in group ${GROUP}, and no job sent for later with id nothing-here`,
    );

    const unreachable = await runCli(
      ['schedules', 'list', '--scheduler-endpoint', 'http://127.0.0.1:9'],
      emulator.endpoint,
    );
    expect(unreachable.code).toBe(2);
    expect(unreachable.stderr).toContain('check --scheduler-endpoint');

    // A table name that does not exist: one line naming it and the flag, no stack trace.
    for (const command of [['list'], ['show', 'nothing-here']]) {
      const noTable = await runCli(
        [
          'schedules',
          ...command,
          '--scheduler-endpoint',
          scheduler.url,
          '--endpoint',
          emulator.endpoint,
          '--dynamodb-endpoint',
          db.endpoint,
          '--idempotency-table',
          'NoSuchTable',
        ],
        emulator.endpoint,
        { nowMs: () => clock.now() },
      );
      expect(noTable.code).toBe(2);
      expect(noTable.stderr).toBe(
        `error: no idempotency table named "NoSuchTable" at ${db.endpoint}: check --idempotency-table (the stack output IdempotencyTableName) and the region\n`,
      );
    }
  });

  it('a firing Scheduler could not deliver is in the schedule DLQ, and dlq list/show say so with its error (not as a crash)', async () => {
    await schedulerClient.send(
      new CreateScheduleCommand({
        Name: 'to-a-deleted-queue',
        GroupName: GROUP,
        ScheduleExpression: 'rate(1 day)',
        FlexibleTimeWindow: { Mode: 'OFF' },
        Target: {
          Arn: 'arn:aws:sqs:us-east-1:000000000000:deleted-queue',
          RoleArn: 'arn:aws:iam::000000000000:role/scheduler',
          Input: JSON.stringify({
            specversion: '1.0',
            id: 'to-a-deleted-queue@<aws.scheduler.scheduled-time>',
            source: '/s',
            type: 'billing.gone',
          }),
          RetryPolicy: { MaximumRetryAttempts: 0 },
          DeadLetterConfig: { Arn: dlq.arn },
        },
      }),
    );
    const firing = await scheduler.fireNow('to-a-deleted-queue', { groupName: GROUP });
    expect(firing.outcome).toBe('dead-lettered');

    const listed = await runCli(['dlq', 'list', '--dlq-url', dlq.url], emulator.endpoint);
    expect(listed.stdout).toContain(
      'EventBridge Scheduler could not deliver these firings to their queue (AWS.SimpleQueueService.NonExistentQueue ×1)',
    );
    const shown = await runCli(
      ['dlq', 'show', '--dlq-url', dlq.url, '--message-id', firing.messageIds[0] as string],
      emulator.endpoint,
    );
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(
      `schedule           arn:aws:scheduler:us-east-1:000000000000:schedule/${GROUP}/to-a-deleted-queue`,
    );
    expect(shown.stdout).toContain('Scheduler error    AWS.SimpleQueueService.NonExistentQueue');
    expect(shown.stdout).toContain(
      'a schedule dead-letter event: EventBridge Scheduler could not deliver this firing',
    );
    expect(shown.stdout).not.toContain('no evidence attributes');

    // The fix: redrive the firing to a queue that exists; Scheduler's attributes stay behind.
    const restored = await emulator.createQueue('restored', false);
    const redrive = await runCli(
      [
        'dlq',
        'redrive',
        '--dlq-url',
        dlq.url,
        '--target-url',
        restored.url,
        '--reason',
        'schedule-delivery-failed',
        '--yes',
      ],
      emulator.endpoint,
    );
    expect(redrive.code).toBe(0);
    const [moved] = await emulator.receiveWithin(restored, 10_000);
    expect(JSON.parse(moved?.Body ?? '{}').id).toBe(`to-a-deleted-queue@${firing.scheduledTime}`);
    expect(Object.keys(moved?.MessageAttributes ?? {})).toEqual([]);
  });
});
