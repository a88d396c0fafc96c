/**
 * The console's HTTP server (lib/console/server.ts, lib/console/sessions.ts) over a real socket and
 * the embedded SQS emulator (fauxqs), as another server on 127.0.0.1 or a page on another local
 * port could reach it:
 * - the cookie is not the key, and a request with the cookie alone (what every other server on
 *   127.0.0.1 receives) reads and changes nothing: every API route answers 403, the page itself
 *   carries no data, title or secret, and no DLQ message was received;
 * - no GET changes anything on a queue: every GET route of the app, called with the key, leaves
 *   each DLQ message's receive count where it was; the reads that receive are POSTs;
 * - an oversized body gets 413 before it is read whole (announced, or chunked and never ended).
 * Routes are taken from the app itself, so a route added later is covered too.
 */
import { request as httpRequest } from 'node:http';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConsoleAssets } from '../../lib/console/assets.ts';
import { ConsoleBackend } from '../../lib/console/backend.ts';
import {
  CONSOLE_MAX_BODY_BYTES,
  type ConsoleServer,
  createConsoleApp,
  startConsoleServer,
  TOKEN_HEADER,
} from '../../lib/console/server.ts';
import { seedDeadLetters } from '../factories/dead-letters.ts';
import { type EmulatedQueue, type EmulatedSqs, startEmulatedSqs } from '../factories/emulated-sqs.ts';

let emulator: EmulatedSqs;
let server: ConsoleServer | undefined;
const TITLE = 'secret-stack-name';
const DEAD_LETTERS = 3;

beforeAll(async () => {
  emulator = await startEmulatedSqs();
});

afterEach(async () => {
  await server?.close();
  server = undefined;
});

afterAll(async () => {
  await emulator?.stop();
});

/** A console over a fresh queue whose standard DLQ holds {@link DEAD_LETTERS} dead letters never received. */
async function startConsole(): Promise<{ console: ConsoleServer; dlq: EmulatedQueue }> {
  const { queue, dlq } = await emulator.createQueuePair('payments', false);
  await seedDeadLetters(emulator.sqs, { fifoUrl: dlq.url, standardUrl: dlq.url }, {}, DEAD_LETTERS);
  server = await startConsoleServer({
    backend: new ConsoleBackend({
      mode: 'endpoint',
      title: TITLE,
      region: 'us-east-1',
      sqs: emulator.sqs,
      dynamodb: undefined,
      queues: [{ id: 'payments', url: queue.url, dlqUrl: dlq.url }],
      idempotencyTables: [],
      dlqWaitSeconds: 0,
      sampleSeconds: 3600,
    }),
  });
  return { console: server, dlq };
}

/**
 * The receive count of each DLQ message as one more receive finds it (that receive counts 1):
 * `[1, 1, 1]` when nothing received them before.
 */
async function receiveCounts(dlq: EmulatedQueue): Promise<number[]> {
  const out = await emulator.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: dlq.url,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 0,
      MessageSystemAttributeNames: ['ApproximateReceiveCount'],
    }),
  );
  return (out.Messages ?? []).map((m) => Number(m.Attributes?.ApproximateReceiveCount));
}

/** Every route of the console app, `{ method, path }`, with its parameters filled in. */
async function routes(): Promise<{ method: 'GET' | 'POST'; path: string }[]> {
  const app = createConsoleApp(
    new ConsoleBackend({
      mode: 'endpoint',
      title: 'routes',
      region: undefined,
      sqs: emulator.sqs,
      dynamodb: undefined,
      queues: [],
      idempotencyTables: [],
    }),
    await loadConsoleAssets(),
    { token: 'unused', allowedHosts: undefined, cookieName: 'unused' },
  );
  const values: Record<string, string> = { id: 'payments', messageId: 'any-message' };
  return app.routes
    .filter((r) => r.method === 'GET' || r.method === 'POST')
    .map((r) => ({
      method: r.method as 'GET' | 'POST',
      path: r.path.replace(/:(\w+)/g, (_, name: string) => {
        const value = values[name];
        if (value === undefined) throw new Error(`no test value for route parameter :${name} (${r.path})`);
        return value;
      }),
    }));
}

/** The session the printed URL opens: the cookie's name and value, and the page secret. */
async function openSession(console: ConsoleServer) {
  const page = await fetch(console.url);
  expect(page.status).toBe(200);
  const setCookie = page.headers.get('set-cookie') ?? '';
  const [pair = ''] = setCookie.split(';');
  const [name = '', value = ''] = pair.split('=');
  const html = await page.text();
  const secret = /name="sqs-jobs-token" content="([^"]*)"/.exec(html)?.[1] ?? '';
  return { setCookie, html, cookie: `${name}=${value}`, cookieValue: value, secret };
}

/** A request as a browser page or another local server could send it. */
function send(
  console: ConsoleServer,
  route: { method: 'GET' | 'POST'; path: string },
  headers: Record<string, string>,
): Promise<Response> {
  return fetch(`${console.origin}${route.path}`, {
    method: route.method,
    headers:
      route.method === 'POST'
        ? { origin: console.origin, 'content-type': 'application/json', ...headers }
        : headers,
    ...(route.method === 'POST' ? { body: JSON.stringify({ dryRun: true, type: 'payments.capture' }) } : {}),
  });
}

describe('the console: its cookie is not its key', () => {
  it('opens a session with the key once: neither the cookie nor the page holds the key', async () => {
    const { console } = await startConsole();
    const session = await openSession(console);
    expect(session.setCookie).toMatch(new RegExp(`^sqs_jobs_console_${console.port}=`));
    expect(session.setCookie).toMatch(/HttpOnly/i);
    expect(session.setCookie).toMatch(/SameSite=Strict/i);
    expect(session.cookieValue.length).toBeGreaterThanOrEqual(40);
    expect(session.secret.length).toBeGreaterThanOrEqual(40);
    for (const value of [session.setCookie, session.html]) expect(value).not.toContain(console.token);
    expect(session.secret).not.toBe(session.cookieValue);
  });

  it('with the cookie alone, reads and changes nothing', async () => {
    const { console, dlq } = await startConsole();
    const { cookie, secret } = await openSession(console);
    const all = await routes();
    expect(all.filter((r) => r.path.startsWith('/api/')).length).toBeGreaterThanOrEqual(7);
    for (const route of all) {
      const answer = await send(console, route, { cookie });
      const text = await answer.text();
      if (route.path.startsWith('/api/')) {
        expect(answer.status, `${route.method} ${route.path}`).toBe(403);
      } else {
        // The page and its files: static, no data, no title, no secret.
        expect(answer.status, `${route.method} ${route.path}`).toBe(200);
        for (const hidden of [console.token, secret, TITLE]) expect(text).not.toContain(hidden);
      }
    }
    // The page secret without its cookie, or with a wrong one, opens nothing either.
    const withoutItsCookie: Record<string, string>[] = [
      { [TOKEN_HEADER]: secret },
      { [TOKEN_HEADER]: secret, cookie: `${cookie}x` },
    ];
    for (const headers of withoutItsCookie) {
      expect((await send(console, { method: 'GET', path: '/api/config' }, headers)).status).toBe(403);
    }
    expect(await receiveCounts(dlq)).toEqual(Array(DEAD_LETTERS).fill(1));
  });

  it('with the cookie and its page secret, the page reads (as the browser does)', async () => {
    const { console } = await startConsole();
    const { cookie, secret } = await openSession(console);
    const headers = { cookie, [TOKEN_HEADER]: secret };
    const config = await send(console, { method: 'GET', path: '/api/config' }, headers);
    expect(config.status).toBe(200);
    expect(((await config.json()) as { title: string }).title).toBe(TITLE);
    const read = await send(console, { method: 'POST', path: '/api/queues/payments/dead-letters' }, headers);
    expect(read.status).toBe(200);
    expect(((await read.json()) as { total: number }).total).toBe(DEAD_LETTERS);
  });
});

describe('the console: no GET changes anything on a queue', () => {
  it('leaves every receive count as it was after every GET route, called with the key', async () => {
    const { console, dlq } = await startConsole();
    const key = { [TOKEN_HEADER]: console.token };
    const all = await routes();
    for (const route of all.filter((r) => r.method === 'GET')) {
      // Let in and answered (a lookup may find nothing); asked to read again too.
      for (const path of [route.path, `${route.path}?refresh=1`]) {
        const answer = await send(console, { ...route, path }, key);
        expect(answer.status, path).not.toBe(403);
        expect(answer.status, path).toBeLessThan(500);
      }
    }
    // The reads that receive are POSTs: as a GET they do not exist.
    for (const route of all.filter((r) => r.method === 'POST')) {
      expect((await send(console, { method: 'GET', path: route.path }, key)).status, route.path).toBe(404);
    }
    expect(await receiveCounts(dlq)).toEqual(Array(DEAD_LETTERS).fill(1));
  });
});

/** Sends a POST's headers (and `chunks`, without ending it) and resolves with the first answer. */
function postWithoutEnd(
  console: ConsoleServer,
  headers: Record<string, string | number>,
  chunks: readonly Buffer[],
): Promise<{ status: number; body: string; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${console.origin}/api/queues/payments/redrive`,
      {
        method: 'POST',
        headers: {
          [TOKEN_HEADER]: console.token,
          origin: console.origin,
          'content-type': 'application/json',
          ...headers,
        },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          request.destroy();
          resolve({ status: response.statusCode ?? 0, body, connection: response.headers.connection });
        });
      },
    );
    request.on('error', (error) => {
      // The server may close the connection while a chunk is still on its way: an answer counts.
      if (
        (error as NodeJS.ErrnoException).code !== 'ECONNRESET' &&
        (error as NodeJS.ErrnoException).code !== 'EPIPE'
      ) {
        reject(error);
      }
    });
    request.flushHeaders();
    for (const chunk of chunks) request.write(chunk);
  });
}

describe('the console: request bodies have a size limit', () => {
  it('refuses an announced 100 MB body at once, without waiting for it (413)', async () => {
    const { console } = await startConsole();
    const answer = await postWithoutEnd(console, { 'content-length': 100 * 1024 * 1024 }, []);
    expect(answer.status).toBe(413);
    expect(answer.body).toContain(`at most ${CONSOLE_MAX_BODY_BYTES} bytes`);
    expect(answer.connection).toBe('close');
  });

  it('refuses a chunked body once it passes the limit, before it ends (413)', async () => {
    const { console } = await startConsole();
    const chunk = Buffer.alloc(256 * 1024, 0x20);
    const chunks = Array.from({ length: CONSOLE_MAX_BODY_BYTES / chunk.length + 1 }, () => chunk);
    const answer = await postWithoutEnd(console, { 'transfer-encoding': 'chunked' }, chunks);
    expect(answer.status).toBe(413);
    expect(answer.body).toContain('request body too large');
  });
});
