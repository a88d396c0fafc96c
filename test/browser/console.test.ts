/**
 * The web console in a real browser (Chromium driven by playwright-core; the Debian `chromium`
 * package, no browser download), against the sample stack on the local runtime with faults:
 * - the queues page sees the queues fill and drain, and the dead letters arrive;
 * - the dead-letters page shows them grouped by cause; a dry-run redrive counts, the confirmed
 *   redrive moves, and the redriven jobs complete (their idempotency records say COMPLETED, and
 *   nothing came back to the DLQ);
 * - the jobs page shows a redriven job's record and its chain (parent, children, every job of the
 *   chain, each a link to its own page);
 * - a request without the token is refused (403), and a read-only console has no redrive.
 * Screenshots of the three pages go to test-results/console-*.png (and, with
 * SQS_JOBS_UPDATE_SCREENSHOTS=1, to docs/ for the README). Every wait is on a page selector or
 * condition, never a fixed sleep.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobClient } from '../../lib/client/job-client.ts';
import { ConsoleBackend } from '../../lib/console/backend.ts';
import { localRuntimeSetup } from '../../lib/console/local.ts';
import { type ConsoleServer, startConsoleServer, TOKEN_HEADER } from '../../lib/console/server.ts';
import { type SampleStack, SOLD_OUT_SKU, startSampleStack } from '../../lib/local/workload.ts';
import type { Booking } from '../../lib/sample/domain.ts';
import { sampleJobs } from '../../lib/sample/jobs.ts';

/** The DOM as the functions run in the page see it (the project's tsconfig has no DOM lib). */
interface PageElement {
  readonly textContent: string | null;
  querySelector(selector: string): PageElement | null;
}
declare const document: {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): Iterable<PageElement>;
};

const CHROMIUM = process.env.SQS_JOBS_CHROMIUM ?? '/usr/bin/chromium';
const RESULTS = new URL('../../test-results/', import.meta.url);
const DOCS = new URL('../../docs/', import.meta.url);

let stack: SampleStack;
let server: ConsoleServer;
let readOnly: ConsoleServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

async function screenshot(name: string): Promise<void> {
  mkdirSync(RESULTS, { recursive: true });
  const file = new URL(`console-${name}.png`, RESULTS);
  await page.screenshot({ path: file.pathname, fullPage: true });
  if (process.env.SQS_JOBS_UPDATE_SCREENSHOTS === '1') {
    copyFileSync(file, new URL(`console-${name}.png`, DOCS));
  }
}

async function seedBookings(userId: string, count: number, sku: string): Promise<Booking[]> {
  await stack.repository.putUser({ userId, email: `${userId}@example.com`, name: userId });
  const bookings: Booking[] = [];
  for (let i = 1; i <= count; i++) {
    const booking: Booking = {
      bookingId: `${userId}-b${i}`,
      userId,
      sku,
      quantity: 1,
      amountCents: 1_000 + i,
      ordinal: i,
      status: 'PENDING',
    };
    await stack.repository.putBooking(booking);
    bookings.push(booking);
  }
  return bookings;
}

/** The number in a queue row's cell, as the page shows it. */
function cell(queue: string, field: string): Promise<number> {
  return page
    .locator(`tr[data-queue="${queue}"] td[data-field="${field}"]`)
    .textContent()
    .then((text) => Number.parseInt(text ?? '', 10));
}

beforeAll(async () => {
  stack = await startSampleStack({ externalTimeoutMs: 3_000, externalService: { slowMs: 300 } });
  await stack.repository.putStock('sku-01', 1_000);
  await stack.repository.putStock(SOLD_OUT_SKU, 0);
  server = await startConsoleServer({
    backend: new ConsoleBackend(localRuntimeSetup(stack.runtime, { sampleSeconds: 1 })),
  });
  readOnly = await startConsoleServer({
    backend: new ConsoleBackend(localRuntimeSetup(stack.runtime, { sampleSeconds: 1 }), { readOnly: true }),
  });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await readOnly?.close();
  await stack?.stop();
});

describe('the console in a browser, on a local run with faults', () => {
  it('sees the queues fill and drain, and the dead letters arrive', async () => {
    await page.goto(server.url);
    await page.locator('tr[data-queue="payments"]').waitFor();
    // The token left the address bar (a cookie carries it from here on).
    expect(page.url()).not.toContain('token=');

    const { runtime, target, service } = stack;
    const payments = await seedBookings('u-console-pay', 30, 'sku-01');
    service.setFaults({ slow: 0.5 });
    const client = new JobClient({ source: '/test/console', queueUrls: target.queueUrls, sqs: runtime.sqs });
    // Delayed a few seconds: the console samples every second, so it sees them waiting.
    await client.sendBatch(
      payments.map((b) => ({
        job: sampleJobs.capturePayment,
        data: { userId: b.userId, bookingId: b.bookingId },
        options: { id: `capture-${b.bookingId}`, delaySeconds: 8 },
      })),
    );
    // Faults: two malformed messages, two bookings of a sold-out SKU.
    await runtime.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: target.queueUrls.payments,
        Entries: [
          { Id: 'm1', MessageBody: '{"specversion":"1.0","type":"payments.capture","data":' },
          { Id: 'm2', MessageBody: 'not json at all' },
        ],
      }),
    );
    // A payment for a booking that does not exist: BookingNotFoundError, a cause of its own.
    await client.send(
      sampleJobs.capturePayment,
      { userId: 'u-console-pay', bookingId: 'u-console-pay-b404' },
      { id: 'capture-missing' },
    );
    for (const user of ['u-console-a', 'u-console-b']) {
      const [booking] = await seedBookings(user, 1, SOLD_OUT_SKU);
      await client.send(
        sampleJobs.reserveInventory,
        { userId: user, bookingId: booking?.bookingId ?? '' },
        { partitionKey: user, id: `reserve-${booking?.bookingId}` },
      );
    }

    // Fill: the page shows payments waiting.
    await page.waitForFunction(
      () => {
        const row = document.querySelector('tr[data-queue="payments"]');
        const n = (f: string) => Number(row?.querySelector(`td[data-field="${f}"]`)?.textContent ?? 0);
        return n('visible') + n('inFlight') + n('delayed') > 0;
      },
      undefined,
      { timeout: 60_000 },
    );
    // Drain: every queue empty, the four dead letters in their DLQs.
    await page.waitForFunction(
      () => {
        const rows = [...document.querySelectorAll('tr[data-queue]')];
        const n = (row: PageElement, f: string) =>
          Number.parseInt(row.querySelector(`td[data-field="${f}"]`)?.textContent ?? 'x', 10);
        const empty = rows.every((r) => n(r, 'visible') + n(r, 'inFlight') + n(r, 'delayed') === 0);
        const dlq = (q: string) => n(document.querySelector(`tr[data-queue="${q}"]`) as PageElement, 'dlq');
        return rows.length === 3 && empty && dlq('payments') === 3 && dlq('booking') === 2;
      },
      undefined,
      { timeout: 90_000 },
    );
    service.setFaults({});
    expect(await cell('payments', 'completed')).toBeGreaterThanOrEqual(32);
    // The chart drew the run (uPlot renders into a canvas).
    await expect(page.locator('[data-testid="depth-chart"] canvas').count()).resolves.toBeGreaterThan(0);
    await screenshot('queues');
  }, 150_000);

  it('shows dead letters by cause, redrives a group after a dry run, and the redriven jobs complete', async () => {
    // The payments DLQ: two causes; both malformed messages in one group; a message's body and evidence.
    await page.locator('a[data-nav="dead-letters"]').click();
    await page.locator('a[data-dlq-tab="payments"]').click();
    await page.locator('tr[data-group="EnvelopeError"]').waitFor();
    expect(await page.locator('tr[data-group="EnvelopeError"] td[data-field="count"]').textContent()).toBe(
      '2',
    );
    expect(
      await page.locator('tr[data-group="BookingNotFoundError"] td[data-field="count"]').textContent(),
    ).toBe('1');
    await page.locator('tr[data-group="BookingNotFoundError"] td a').click();
    await page.locator('[data-testid="message-body"]').waitFor();
    expect(await page.locator('[data-testid="message"]').textContent()).toMatch(
      /booking u-console-pay-b404 of user u-console-pay not found/,
    );
    expect(await page.locator('[data-testid="message-body"]').textContent()).toContain(
      '"id": "capture-missing"',
    );
    await screenshot('dead-letters');

    // The booking DLQ (FIFO): the sold-out bookings. Fix the cause, then redrive the group.
    await page.locator('a[data-dlq-tab="booking"]').click();
    const group = page.locator('tr[data-group="OutOfStockError"]');
    await group.waitFor();
    expect(await group.locator('td[data-field="count"]').textContent()).toBe('2');
    await stack.repository.putStock(SOLD_OUT_SKU, 10);

    await group.locator('button[data-action="redrive-group"]').click();
    const dryRun = page.locator('[data-testid="dry-run"]');
    await dryRun.waitFor();
    expect(await dryRun.locator('[data-field="selected"]').textContent()).toBe('2');
    await page.locator('button[data-action="confirm-redrive"]').click();
    await page.locator('[data-testid="redrive-result"] [data-field="moved"]').waitFor();
    expect(await page.locator('[data-testid="redrive-result"] [data-field="moved"]').textContent()).toBe('2');

    // What came back: nothing; both jobs completed (their idempotency records).
    await page.waitForFunction(
      () => {
        const statuses = [...document.querySelectorAll('[data-testid="verify"] td[data-field="status"]')];
        const back =
          document.querySelector('[data-testid="verify"] [data-field="came-back"]')?.textContent ?? '';
        return (
          statuses.length === 2 &&
          statuses.every((s) => s.textContent === 'COMPLETED') &&
          back.includes('nothing')
        );
      },
      undefined,
      { timeout: 60_000 },
    );
    await page
      .locator('[data-testid="redrive"]')
      .screenshot({ path: new URL('console-redrive.png', RESULTS).pathname });

    // The jobs page, from the redriven job's link: its record and steps.
    await page.locator('[data-testid="verify"] tr[data-job="reserve-u-console-a-b1"] a').click();
    await page.locator('[data-testid="job-record"] td[data-field="status"]').waitFor();
    expect(await page.locator('[data-testid="job-record"] td[data-field="status"]').textContent()).toBe(
      'COMPLETED',
    );
    expect(await page.locator('[data-testid="job-dead-letters"]').textContent()).toMatch(
      /Not in any dead-letter queue/,
    );
    // Times the record format derives rather than stores are shown too.
    for (const field of ['createdAtMs', 'completedAtMs', 'updatedAtMs']) {
      expect(
        await page.locator(`[data-testid="job-record"] td[data-field="${field}"]`).textContent(),
        field,
      ).toMatch(/\d{2}:\d{2}:\d{2}/);
    }

    // Its chain: reserve → confirm → invoice → email, each a link to its own page. The redriven
    // reserve completed; its descendants follow: look again until the whole chain is done.
    const chain = page.locator('[data-testid="job-chain"]');
    await chain.locator('tr[data-chain-job="booking.reserve-inventory"]').waitFor();
    expect(await chain.locator('[data-field="parent"]').textContent()).toContain(
      'none: this job is the root',
    );
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const rows = chain.locator('tr[data-chain-job]');
      const states = await rows.evaluateAll((list) =>
        list.map((r) => (r as unknown as { getAttribute(n: string): string }).getAttribute('data-state')),
      );
      if (states.length === 4 && states.every((state) => state === 'done')) break;
      // The page reads the chain once per lookup: ask again, and wait for the answer.
      const answered = page.waitForResponse((r) => r.url().includes('/api/jobs?'));
      await chain.locator('button[data-action="refresh-chain"]').click();
      await answered;
    }
    expect(
      await chain
        .locator('tr[data-chain-job]')
        .evaluateAll((rows) =>
          rows.map((r) =>
            (r as unknown as { getAttribute(n: string): string }).getAttribute('data-chain-job'),
          ),
        ),
    ).toEqual([
      'booking.reserve-inventory',
      'booking.confirm-reservation',
      'booking.issue-invoice',
      'notifications.send-email',
    ]);
    // A child's page names its parent and its own child, each a link.
    await chain.locator('[data-field="children"] a[data-chain-link="booking.confirm-reservation"]').click();
    await page
      .locator(
        '[data-testid="job-chain"] [data-field="parent"] a[data-chain-link="booking.reserve-inventory"]',
      )
      .waitFor();
    expect(await page.locator('[data-testid="job-chain"] [data-field="children"]').textContent()).toContain(
      'booking.issue-invoice',
    );
    await page
      .locator('[data-testid="job-chain"]')
      .screenshot({ path: new URL('console-job-chain.png', RESULTS).pathname });

    // A payment: its record, its result and its `once` step (the capture call to the payment API).
    await page.goto(
      `${server.origin}/#/jobs?type=payments.capture&source=/test/console&id=capture-u-console-pay-b1`,
    );
    await page.locator('[data-testid="job-record"] tr[data-step="capture"]').waitFor();
    expect(await page.locator('[data-testid="job-record"] td[data-field="status"]').textContent()).toBe(
      'COMPLETED',
    );
    await screenshot('jobs');
    expect(pageErrors).toEqual([]);
  }, 120_000);

  it('refuses requests without the token (403), and cross-origin state changes', async () => {
    const noToken = await fetch(`${server.origin}/api/queues`);
    expect(noToken.status).toBe(403);
    expect((await fetch(`${server.origin}/`)).status).toBe(403);
    expect((await fetch(`${server.origin}/api/config?token=wrong`)).status).toBe(403);
    expect(
      (await fetch(`${server.origin}/api/config`, { headers: { [TOKEN_HEADER]: server.token } })).status,
    ).toBe(200);
    const post = (headers: Record<string, string>) =>
      fetch(`${server.origin}/api/queues/payments/redrive`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ dryRun: true }),
      });
    expect((await post({ origin: server.origin })).status).toBe(403);
    expect((await post({ [TOKEN_HEADER]: server.token, origin: 'http://evil.example' })).status).toBe(403);
    expect((await post({ [TOKEN_HEADER]: server.token, origin: server.origin })).status).toBe(200);
    // A confirmed redrive without a dry run's plan is refused.
    const blind = await fetch(`${server.origin}/api/queues/payments/redrive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [TOKEN_HEADER]: server.token, origin: server.origin },
      body: JSON.stringify({ dryRun: false }),
    });
    expect(blind.status).toBe(409);
    // DNS rebinding: another Host name is refused even with the token.
    // (fetch cannot set Host: a plain node:http request does.)
    const rebound = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(
        `${server.origin}/api/config`,
        { headers: { [TOKEN_HEADER]: server.token, host: `attacker.example:${server.port}` } },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      request.on('error', reject);
      request.end();
    });
    expect(rebound).toBe(403);
  });

  it('has no redrive in read-only mode', async () => {
    const ro = await browser.newPage();
    await ro.goto(readOnly.url);
    await ro.locator('[data-testid="read-only"]').waitFor();
    await ro.locator('a[data-nav="dead-letters"]').click();
    await ro.locator('a[data-dlq-tab="payments"]').click();
    await ro.locator('tr[data-group="EnvelopeError"]').waitFor();
    expect(await ro.locator('button[data-action="redrive-group"]').count()).toBe(0);
    expect(await ro.locator('[data-action="open-filter"]').count()).toBe(0);
    const refused = await fetch(`${readOnly.origin}/api/queues/payments/redrive`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [TOKEN_HEADER]: readOnly.token,
        origin: readOnly.origin,
      },
      body: JSON.stringify({ dryRun: true }),
    });
    expect(refused.status).toBe(403);
    await ro.close();
  });
});
