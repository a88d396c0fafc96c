/**
 * The console's schedules page and limits panel in a real browser (Chromium driven by
 * playwright-core; the Debian `chromium` package), over the local EventBridge Scheduler emulator
 * (manual clock: nothing fires unless an operator fires it), fauxqs and dynalite:
 * - the queues page shows each flow-control limit: running jobs against a concurrency limit, a
 *   rate limit lowered by throttling against its declared rate;
 * - the schedules page lists a job sent for later by the real `JobClient` (when, which job, for
 *   whom) and a recurring schedule with its next firings at 23:00 in its time zone;
 * - "Fire now" sends the schedule's job (a scheduled time of its own), and once the worker ran it
 *   the page lists the firing, fired by an operator, done;
 * - "Cancel" cancels the pending job (its schedule deleted), and it leaves the list;
 * - a read-only console has neither button and refuses both POSTs (403); so does any console
 *   without the token or from another origin.
 * Screenshot: test-results/console-schedules.png. Every wait is on a selector or a condition.
 */
import { mkdirSync } from 'node:fs';
import { GetScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConsoleBackend } from '../../lib/console/backend.ts';
import { type ConsoleServer, startConsoleServer, TOKEN_HEADER } from '../../lib/console/server.ts';
import type { ConsoleSetup } from '../../lib/console/setup.ts';
import { nextFirings, wallClockOf } from '../../lib/core/schedule-expression.ts';
import { oneTimeScheduleName } from '../../lib/core/scheduled-job.ts';
import { ManualClock } from '../../lib/local/scheduler/index.ts';
import { defineRateLimit } from '../../lib/runtime/limits/rate-limit.ts';
import { LimitStore } from '../../lib/runtime/limits/store.ts';
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

const CHROMIUM = process.env.SQS_JOBS_CHROMIUM ?? '/usr/bin/chromium';
const RESULTS = new URL('../../test-results/', import.meta.url);
const GROUP = 'console-billing';
const START = Date.now();

let world: SchedulesWorld;
let emulator: EmulatedSqs;
let db: DynaliteHandle;
let tableName: string;
let schedulerClient: SchedulerClient;
let queue: EmulatedQueue;
let dlq: EmulatedQueue;
let server: ConsoleServer;
let readOnly: ConsoleServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

/** Runs the one message on the billing queue (a firing) through the real worker; the ids of the jobs it ran. */
async function runOneFiring(): Promise<string[]> {
  const ran: string[] = [];
  const handler = nightlyWorker(world, {
    schema: z.object({}).passthrough(),
    handlerVersion: 'browser-schedules',
    ran,
  });
  await runBillingQueue(world, handler, 1);
  return ran;
}

/** A POST to the console API with the token and the console's own Origin (what the page sends). */
async function post(
  target: ConsoleServer,
  path: string,
  body: unknown,
): Promise<{ status: number; text: string }> {
  const response = await fetch(`${target.origin}${path}`, {
    method: 'POST',
    headers: { [TOKEN_HEADER]: target.token, origin: target.origin, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, text: await response.text() };
}

beforeAll(async () => {
  world = await startSchedulesWorld({
    group: GROUP,
    clock: new ManualClock(START),
    source: '/services/booking',
    nightlyData: {},
  });
  ({ emulator, db, tableName, queue, dlq, schedulerClient } = world);
  await world.client.send(
    expireHold,
    { holdId: 'h-1' },
    { id: 'hold-h-1', partitionKey: 'tenant-7', runAt: new Date(START + 3 * 86_400_000) },
  );
  const limits = new LimitStore({ tableName, client: db.client });
  await limits.slots.acquire({
    name: 'reports.build',
    key: 'tenant-7',
    limit: 2,
    expiresAtMs: Date.now() + 600_000,
  });
  const partner = defineRateLimit({ name: 'partner-api', perSecond: 20, burst: 40 });
  await limits.buckets.take(partner, 'tenant-7');
  await limits.buckets.throttled(partner, 'tenant-7');

  const setup = (readOnlyConsole: boolean): ConsoleSetup => ({
    mode: 'local',
    title: 'schedules',
    region,
    sqs: emulator.sqs,
    dynamodb: db.client,
    queues: [{ id: 'billing', url: queue.url, dlqUrl: dlq.url }],
    idempotencyTables: [tableName],
    scheduler: schedulerClient,
    ...(readOnlyConsole ? { scheduleGroups: [GROUP] } : {}),
  });
  server = await startConsoleServer({ backend: new ConsoleBackend(setup(false)) });
  readOnly = await startConsoleServer({ backend: new ConsoleBackend(setup(true), { readOnly: true }) });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('dialog', (dialog) => void dialog.accept());
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await readOnly?.close();
  await world?.stop();
});

describe('the console: schedules and limits', () => {
  it('the queues page shows each flow-control limit: holders against the limit, the lowered rate against the declared one', async () => {
    await page.goto(server.url);
    const slot = page.locator('tr[data-limit="concurrency:reports.build:tenant-7"]');
    await slot.waitFor();
    expect(await slot.locator('td[data-field="holders"]').textContent()).toBe('1 running');
    expect(await slot.locator('td[data-field="limit"]').textContent()).toBe('2');
    const rate = page.locator('tr[data-limit="rate:partner-api:tenant-7"]');
    expect(await rate.locator('td[data-field="rate"]').textContent()).toBe('10.00/s');
    expect(await rate.locator('td[data-field="perSecond"]').textContent()).toBe('20.00/s');
  });

  it('lists the pending job (when, which job, for whom) and the recurring schedule with its next firings in its zone', async () => {
    await page.click('a[data-nav="schedules"]');
    const row = page.locator('tr[data-job="hold-h-1"]');
    await row.waitFor();
    const text = (await row.textContent()) ?? '';
    expect(text).toContain('booking.expire-hold');
    expect(text).toContain('tenant-7');
    expect(text).toContain('schedule');
    const next = nextFirings('cron(0 23 * * ? *)', {
      timeZone: 'Europe/Berlin',
      after: new Date(START),
      count: 1,
    })[0] as Date;
    const schedule = page.locator('div[data-schedule="nightly-invoices"]');
    expect(await schedule.locator('[data-field="next"]').textContent()).toContain(
      wallClockOf(next, 'Europe/Berlin').replace('T', ' '),
    );
    expect(await schedule.locator('[data-field="next"]').textContent()).toContain('Europe/Berlin');
  });

  it('Fire now sends the job with a time of its own; once run, the page lists the firing as fired by an operator, done', async () => {
    await page.click('div[data-schedule="nightly-invoices"] button[data-action="fire"]');
    await page.locator('[data-testid="schedules-message"]', { hasText: 'Fired nightly-invoices' }).waitFor();
    const message = (await page.locator('[data-testid="schedules-message"]').textContent()) ?? '';
    const jobId = /sent job (nightly-invoices@\S+Z)/.exec(message)?.[1] ?? '';
    expect(jobId).toMatch(/^nightly-invoices@\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await runOneFiring()).toEqual([jobId]);
    await page.click('[data-testid="schedules-refresh"]');
    const firing = page.locator(`tr[data-firing="${jobId}"]`);
    await firing.waitFor();
    expect(await firing.textContent()).toContain('fired by an operator');
    expect(await firing.textContent()).toContain('done');
    mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: new URL('console-schedules.png', RESULTS).pathname, fullPage: true });
  });

  it('Cancel cancels the pending job: it leaves the list and its schedule is deleted', async () => {
    await page.click('tr[data-job="hold-h-1"] button[data-action="cancel"]');
    await page.locator('[data-testid="schedules-message"]', { hasText: 'Cancelled hold-h-1' }).waitFor();
    await page
      .locator('[data-testid="pending-jobs"]', { hasText: 'No job is waiting for its time.' })
      .waitFor();
    await expect(
      schedulerClient.send(
        new GetScheduleCommand({
          Name: oneTimeScheduleName('/services/booking', 'hold-h-1'),
          GroupName: GROUP,
        }),
      ),
    ).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
    expect(pageErrors).toEqual([]);
  });

  it('a read-only console shows no Cancel or Fire now, and refuses both requests', async () => {
    const other = await browser.newPage();
    await other.goto(`${readOnly.url.replace(/#.*$/, '')}#/schedules`);
    await other.locator('div[data-schedule="nightly-invoices"]').waitFor();
    expect(await other.locator('button[data-action]').count()).toBe(0);
    await other.close();
    const cancel = await post(readOnly, '/api/schedules/cancel', { jobId: 'hold-h-1' });
    expect(cancel.status).toBe(403);
    expect(cancel.text).toContain('read-only');
    const fire = await post(readOnly, '/api/schedules/fire', { name: 'nightly-invoices', group: GROUP });
    expect(fire.status).toBe(403);
    // The session/CSRF protection of every POST: without the token, or from another origin, refused.
    const noToken = await fetch(`${server.origin}/api/schedules/cancel`, {
      method: 'POST',
      headers: { origin: server.origin, 'content-type': 'application/json' },
      body: JSON.stringify({ jobId: 'hold-h-1' }),
    });
    expect(noToken.status).toBe(403);
    const crossOrigin = await fetch(`${server.origin}/api/schedules/fire`, {
      method: 'POST',
      headers: {
        [TOKEN_HEADER]: server.token,
        origin: 'http://evil.example',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'nightly-invoices', group: GROUP }),
    });
    expect(crossOrigin.status).toBe(403);
    const bad = await post(server, '/api/schedules/fire', { name: 'nightly-invoices' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('name and group');
  });
});
