/**
 * The web console in a real browser (Chromium driven by playwright-core; the Debian `chromium`
 * package, no browser download), during a local run with faults as a user starts it:
 * `npm start -- --console` (bin/start.ts as a child process, as the npm script runs it), a
 * workload of 20 users x 2 bookings with API timeouts, 429s, 503s and slow calls, lost Lambda
 * responses, producer resends, two bookings of a sold-out SKU and three malformed messages:
 * - the queues page, opened from the URL printed as soon as the stack is up, sees the queues fill
 *   and drain, and the dead letters arrive;
 * - after the report (the stack keeps running), the dead-letters page shows them grouped by cause;
 *   once the cause is fixed, a dry-run redrive counts, the confirmed redrive moves, and the
 *   redriven jobs complete (their idempotency records say COMPLETED, nothing came back);
 * - the jobs page shows a redriven job's record and its chain (parent, children, every job of the
 *   chain, each a link to its own page), and a payment's record and `once` step;
 * - a request without the token is refused (403), and a read-only console has no redrive;
 * - Ctrl-C stops it all with the report's exit code.
 * Screenshots of the three pages go to test-results/console-*.png (and, with
 * SQS_JOBS_UPDATE_SCREENSHOTS=1, to docs/ for the README). Every wait is on printed output, a page
 * selector or a condition, never a fixed sleep.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleBackend } from '../../lib/console/backend.ts';
import { localDescriptionSetup } from '../../lib/console/local.ts';
import { type ConsoleServer, startConsoleServer, TOKEN_HEADER } from '../../lib/console/server.ts';
import type { LocalRuntimeDescription } from '../../lib/local/serve.ts';
import { DomainRepository } from '../../lib/sample/domain.ts';
import { SOLD_OUT_SKU, WORKLOAD_SOURCE } from '../../lib/sample/workload.ts';
import { type StartProcess, spawnStart } from '../factories/start-process.ts';

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
/** The run: small enough for a test, with every fault of `npm start` but the permanent API 400s. */
const RUN = ['--users', '20', '--bookings-per-user', '2', '--bad-request-rate', '0', '--seed', '3'];

let run: StartProcess;
/** The console `npm start -- --console` printed: its URL (token included) and origin. */
let consoleUrl: URL;
let token: string;
let description: LocalRuntimeDescription;
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

/** The number in a queue row's cell, as the page shows it. */
function cell(queue: string, field: string): Promise<number> {
  return page
    .locator(`tr[data-queue="${queue}"] td[data-field="${field}"]`)
    .textContent()
    .then((text) => Number.parseInt(text ?? '', 10));
}

/** The sample domain of the running stack, through its printed endpoint and table. */
function domain(): { repository: DomainRepository; close(): void } {
  const dynamodb = new DynamoDBClient({
    endpoint: description.endpoints.dynamodb,
    region: description.region,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const table = description.tables.find((t) => t.logicalId.startsWith('AppTable'))?.name ?? '';
  return {
    repository: new DomainRepository({ tableName: table, client: DynamoDBDocumentClient.from(dynamodb) }),
    close: () => dynamodb.destroy(),
  };
}

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  // --json: the description of the kept stack comes as a JSON line; the console's URL is printed
  // (on stderr with --json) as soon as the stack is up, before the workload.
  run = spawnStart([...RUN, '--console', '--json'], { SQS_JOBS_DEBUG: undefined });
  const [, url] = await run.waitFor(/^Console: (http\S+)$/m, 'stderr', 170_000);
  consoleUrl = new URL(url as string);
  token = consoleUrl.searchParams.get('token') ?? '';
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await readOnly?.close();
  if (run && run.child.exitCode === null && run.child.signalCode === null) {
    run.child.kill('SIGKILL');
    await run.exited;
  }
});

describe('the console in a browser, during npm start -- --console (a local run with faults)', () => {
  it('sees the queues fill and drain, and the dead letters arrive', async () => {
    await page.goto(consoleUrl.href);
    await page.locator('tr[data-queue="payments"]').waitFor();
    // The key left the address bar (the page keeps its session's own secret from here on).
    expect(page.url()).not.toContain('token=');

    // Fill: the page shows jobs waiting or running.
    await page.waitForFunction(
      () => {
        const rows = [...document.querySelectorAll('tr[data-queue]')];
        const n = (row: PageElement, f: string) =>
          Number(row.querySelector(`td[data-field="${f}"]`)?.textContent ?? 0);
        return rows.some((r) => n(r, 'visible') + n(r, 'inFlight') + n(r, 'delayed') > 0);
      },
      undefined,
      { timeout: 120_000 },
    );
    // Drain: every queue empty, the run's dead letters in their DLQs: the sold-out bookings and
    // the malformed message of the booking queue, one malformed message in each other queue.
    await page.waitForFunction(
      () => {
        const rows = [...document.querySelectorAll('tr[data-queue]')];
        const n = (row: PageElement, f: string) =>
          Number.parseInt(row.querySelector(`td[data-field="${f}"]`)?.textContent ?? 'x', 10);
        const empty = rows.every((r) => n(r, 'visible') + n(r, 'inFlight') + n(r, 'delayed') === 0);
        const dlq = (q: string) => n(document.querySelector(`tr[data-queue="${q}"]`) as PageElement, 'dlq');
        return (
          rows.length === 3 &&
          empty &&
          dlq('booking') === 3 &&
          dlq('payments') === 1 &&
          dlq('notifications') === 1
        );
      },
      undefined,
      { timeout: 150_000 },
    );
    // The report, then the kept stack's description (JSON Lines on stdout).
    const [line] = await run.waitFor(/^\{"stackName".*\}$/m, 'stdout', 120_000);
    description = JSON.parse(line) as LocalRuntimeDescription;
    const report = JSON.parse(run.stdout().split('\n')[0] ?? '') as { report: { ok: boolean } };
    expect(report.report.ok).toBe(true);
    expect(await cell('payments', 'completed')).toBeGreaterThan(0);
    // The chart drew the run (uPlot renders into a canvas).
    await expect(page.locator('[data-testid="depth-chart"] canvas').count()).resolves.toBeGreaterThan(0);
    await screenshot('queues');
  }, 300_000);

  it('shows dead letters by cause, redrives a group after a dry run, and the redriven jobs complete', async () => {
    // The payments DLQ: the malformed message (bad JSON), its body and evidence.
    await page.locator('a[data-nav="dead-letters"]').click();
    await page.locator('a[data-dlq-tab="payments"]').click();
    const malformed = page.locator('tr[data-group="EnvelopeError"]');
    await malformed.waitFor();
    expect(await malformed.locator('td[data-field="count"]').textContent()).toBe('1');
    await malformed.locator('td a').first().click();
    await page.locator('[data-testid="message-body"]').waitFor();
    expect(await page.locator('[data-testid="message"]').textContent()).toMatch(/invalid job envelope/);
    expect(await page.locator('[data-testid="message-body"]').textContent()).toContain('"id":"bad:');

    // The booking DLQ (FIFO, read through by the report and left whole): the sold-out bookings.
    // Fix the cause, then redrive the group.
    await page.locator('a[data-dlq-tab="booking"]').click();
    const group = page.locator('tr[data-group="OutOfStockError"]');
    await group.waitFor();
    expect(await group.locator('td[data-field="count"]').textContent()).toBe('2');
    expect(
      await page.locator('tr[data-group="UnknownJobTypeError"] td[data-field="count"]').textContent(),
    ).toBe('1');
    // One of them: its evidence and its body, the job as the producer sent it.
    await group.locator('td a').first().click();
    await page.locator('[data-testid="message-body"]').waitFor({ state: 'attached' });
    await page.waitForFunction(() =>
      (document.querySelector('[data-testid="message-body"]')?.textContent ?? '').includes(
        'booking.reserve-inventory',
      ),
    );
    expect(await page.locator('[data-testid="message"]').textContent()).toMatch(/out of stock: sku-sold-out/);
    await screenshot('dead-letters');
    const { repository, close } = domain();
    try {
      await repository.putStock(SOLD_OUT_SKU, 10);
    } finally {
      close();
    }

    await group.locator('button[data-action="redrive-group"]').click();
    const dryRun = page.locator('[data-testid="dry-run"]');
    await dryRun.waitFor();
    expect(await dryRun.locator('[data-field="selected"]').textContent()).toBe('2');
    // What the move will take, before it is confirmed (as `dlq redrive` would move it).
    expect(await dryRun.locator('[data-field="scope"]').textContent()).toContain(
      'Moves the 2 messages selected, each the first of its message group (2 groups)',
    );
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
      { timeout: 90_000 },
    );
    await page
      .locator('[data-testid="redrive"]')
      .screenshot({ path: new URL('console-redrive.png', RESULTS).pathname });

    // The jobs page, from a redriven job's link: its record and steps.
    await page.locator('[data-testid="verify"] tr[data-job] a').first().click();
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
      const answered = page.waitForResponse((r) => r.url().endsWith('/api/jobs'));
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

    // A payment of the run: its record, its result and its `once` step (the capture call to the
    // payment API). The first booking in stock, found through the console's API.
    let paymentId: string | undefined;
    // Booking ids as the workload plans them: b-<user, zero-padded to the width of --users>-<n>.
    const bookingIds = [1, 2, 3, 4].flatMap((user) =>
      [1, 2].map((n) => `b-${String(user).padStart(2, '0')}-${n}`),
    );
    for (const bookingId of bookingIds) {
      // A lookup reads the DLQs (it receives): a POST, with the console's own Origin.
      const answer = await fetch(`${consoleUrl.origin}/api/jobs`, {
        method: 'POST',
        headers: { [TOKEN_HEADER]: token, origin: consoleUrl.origin, 'content-type': 'application/json' },
        body: JSON.stringify({
          type: 'payments.capture',
          source: WORKLOAD_SOURCE,
          id: `capture-${bookingId}`,
        }),
      });
      const found = (await answer.json()) as { record: { record: { status?: string } | null } | null };
      if (found.record?.record?.status === 'COMPLETED') {
        paymentId = `capture-${bookingId}`;
        break;
      }
    }
    expect(paymentId).toBeDefined();
    await page.goto(
      `${consoleUrl.origin}/#/jobs?type=payments.capture&source=${encodeURIComponent(WORKLOAD_SOURCE)}&id=${paymentId}`,
    );
    await page.locator('[data-testid="job-record"] tr[data-step="capture"]').waitFor();
    expect(await page.locator('[data-testid="job-record"] td[data-field="status"]').textContent()).toBe(
      'COMPLETED',
    );
    await screenshot('jobs');
    expect(pageErrors).toEqual([]);
  }, 180_000);

  it('refuses requests without the token (403), and cross-origin state changes', async () => {
    const origin = consoleUrl.origin;
    const noToken = await fetch(`${origin}/api/queues`);
    expect(noToken.status).toBe(403);
    expect((await fetch(`${origin}/`)).status).toBe(403);
    expect((await fetch(`${origin}/api/config?token=wrong`)).status).toBe(403);
    expect((await fetch(`${origin}/api/config`, { headers: { [TOKEN_HEADER]: token } })).status).toBe(200);
    const post = (headers: Record<string, string>) =>
      fetch(`${origin}/api/queues/payments/redrive`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ dryRun: true }),
      });
    expect((await post({ origin })).status).toBe(403);
    expect((await post({ [TOKEN_HEADER]: token, origin: 'http://evil.example' })).status).toBe(403);
    expect((await post({ [TOKEN_HEADER]: token, origin })).status).toBe(200);
    // A confirmed redrive without a dry run's plan is refused.
    const blind = await fetch(`${origin}/api/queues/payments/redrive`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [TOKEN_HEADER]: token, origin },
      body: JSON.stringify({ dryRun: false }),
    });
    expect(blind.status).toBe(409);
    // A browser with the session's cookie but not the page's secret (a tab not opened from the
    // printed URL; what another server on 127.0.0.1 receives): the page loads and shows no data,
    // only where to get in.
    const cookies = await page.context().cookies();
    expect(cookies.map((c) => c.value)).not.toContain(token);
    const cookieOnly = await browser.newContext();
    await cookieOnly.addCookies(cookies);
    const other = await cookieOnly.newPage();
    await other.goto(`${origin}/`);
    const refusal = other.locator('p.error[role="alert"]');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('open the URL that sqs-jobs console printed');
    await cookieOnly.close();
    // DNS rebinding: another Host name is refused even with the token.
    // (fetch cannot set Host: a plain node:http request does.)
    const rebound = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(
        `${origin}/api/config`,
        { headers: { [TOKEN_HEADER]: token, host: `attacker.example:${consoleUrl.port}` } },
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
    // A read-only console on the same running stack, from its printed description (as
    // `sqs-jobs console --local` serves one).
    readOnly = await startConsoleServer({
      backend: new ConsoleBackend(localDescriptionSetup(description), { readOnly: true }),
    });
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

  it('stops everything at Ctrl-C, with the report exit code', async () => {
    run.child.kill('SIGINT');
    const { code } = await run.exited;
    expect(code).toBe(0);
    await expect(fetch(`${consoleUrl.origin}/api/config`)).rejects.toThrow();
  }, 60_000);
});
