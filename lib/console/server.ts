/**
 * The console's web server: the page and a small JSON API over {@link ConsoleBackend}.
 *
 * Server library: Hono (`hono` + `@hono/node-server`), a small, well-kept router on web-standard
 * Request/Response with typed handlers and no dependencies of its own; it is bundled into the CLI
 * (devDependencies), so it is never a dependency of a Lambda worker or a producer.
 *
 * Safety (the console can move messages between queues with the operator's credentials):
 * - binds to 127.0.0.1 unless told otherwise; while bound to a loopback address, requests whose
 *   `Host` is not that address (or `localhost`) with this port are refused, so a web page cannot
 *   reach it by DNS rebinding;
 * - every request needs the random per-start token: in the printed URL (`?token=`), then in an
 *   HttpOnly SameSite=Strict cookie the first page load sets, and in the `x-sqs-jobs-token` header
 *   of the page's API calls; without it the answer is 403;
 * - state-changing requests are POSTs with a JSON body that need the token in the header (a cookie
 *   alone is not enough) and an `Origin` equal to the console's own; a cross-site form cannot send
 *   either;
 * - `--read-only` refuses every POST (the page hides redrive);
 * - answers carry no credential: the backend builds every field it returns, errors are messages
 *   only; `Referrer-Policy: no-referrer` keeps the token out of any Referer, and a strict
 *   Content-Security-Policy allows only the console's own scripts.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { OpsError } from '../ops/errors.ts';
import type { DeadLetterFilter } from '../ops/filters.ts';
import { type ConsoleAssetPath, loadConsoleAssets } from './assets.ts';
import { type ConsoleBackend, ConsoleRequestError } from './backend.ts';

/** Header carrying the token on API calls. */
export const TOKEN_HEADER = 'x-sqs-jobs-token';

/** Options of {@link startConsoleServer}. */
export interface ConsoleServerOptions {
  readonly backend: ConsoleBackend;
  /** Address to listen on. @default '127.0.0.1' */
  readonly host?: string;
  /** Port; 0 picks a free one. @default 0 */
  readonly port?: number;
  /** The access token. @default 32 random bytes, base64url */
  readonly token?: string;
}

/** A running console. */
export interface ConsoleServer {
  /** The URL to open, token included. */
  readonly url: string;
  /** `http://host:port`, what the page's `Origin` must be. */
  readonly origin: string;
  readonly token: string;
  readonly port: number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

const SECURITY_HEADERS: Record<string, string> = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

function sameToken(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host === 'localhost' || host.startsWith('127.');
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function list(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw new ConsoleRequestError(400, 'filter values must be lists of strings');
  }
  return value.filter((v) => v !== '');
}

function filterOf(value: unknown): DeadLetterFilter {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object') throw new ConsoleRequestError(400, 'filter must be an object');
  const f = value as Record<string, unknown>;
  const known = new Set(['jobTypes', 'reasons', 'errorNames', 'jobIds']);
  for (const key of Object.keys(f)) {
    if (!known.has(key)) throw new ConsoleRequestError(400, `unknown filter field "${key}"`);
  }
  return {
    jobTypes: list(f.jobTypes),
    reasons: list(f.reasons),
    errorNames: list(f.errorNames),
    jobIds: list(f.jobIds),
  };
}

/** Builds the Hono app (exported for tests that call `app.request` without a socket). */
export function createConsoleApp(
  backend: ConsoleBackend,
  assets: Awaited<ReturnType<typeof loadConsoleAssets>>,
  options: {
    readonly token: string;
    readonly allowedHosts: ReadonlySet<string> | undefined;
    readonly cookieName: string;
  },
): Hono {
  const { token } = options;
  const app = new Hono();

  app.use('*', async (c, next) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
    const host = c.req.header('host') ?? '';
    if (options.allowedHosts !== undefined && !options.allowedHosts.has(host.toLowerCase())) {
      return c.text('forbidden: unexpected Host header (open the URL sqs-jobs console printed)\n', 403);
    }
    const fromHeader = c.req.header(TOKEN_HEADER);
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      // State changes: the header token (never the cookie alone) and our own Origin.
      const origin = c.req.header('origin');
      if (!sameToken(fromHeader, token)) return c.json({ error: 'forbidden: missing or wrong token' }, 403);
      if (origin !== `http://${host}`) return c.json({ error: 'forbidden: cross-origin request' }, 403);
      if (!(c.req.header('content-type') ?? '').startsWith('application/json')) {
        return c.json({ error: 'send JSON (content-type: application/json)' }, 415);
      }
      return next();
    }
    const fromQuery = c.req.query('token');
    const fromCookie = getCookie(c, options.cookieName);
    if (!sameToken(fromHeader, token) && !sameToken(fromQuery, token) && !sameToken(fromCookie, token)) {
      return c.text(
        'forbidden: this console needs its access token; open the URL that sqs-jobs console printed (it ends in ?token=...)\n',
        403,
      );
    }
    if (sameToken(fromQuery, token)) {
      setCookie(c, options.cookieName, token, { httpOnly: true, sameSite: 'Strict', path: '/' });
    }
    return next();
  });

  app.onError((error, c) => {
    if (error instanceof ConsoleRequestError) return c.json({ error: error.message }, error.status);
    if (error instanceof OpsError) return c.json({ error: error.message, code: error.code }, 502);
    return c.json(
      { error: `unexpected failure: ${error instanceof Error ? error.message : String(error)}` },
      500,
    );
  });

  app.get('/', (c) =>
    c.html(
      assets.index
        .replace('__SQS_JOBS_TOKEN__', token)
        .replace('__SQS_JOBS_TITLE__', escapeHtml(backend.setup.title)),
    ),
  );
  for (const [path, file] of assets.files) {
    app.get(path as ConsoleAssetPath, (c) =>
      c.body(new Uint8Array(file.body), 200, { 'content-type': file.type }),
    );
  }

  app.get('/api/config', (c) =>
    c.json({
      title: backend.setup.title,
      mode: backend.setup.mode,
      region: backend.setup.region,
      readOnly: backend.readOnly,
      sampleSeconds: backend.sampleSeconds,
      queues: backend.setup.queues.map((q) => ({ id: q.id, url: q.url, dlqUrl: q.dlqUrl })),
      idempotencyTables: backend.setup.idempotencyTables,
      scanSteps: backend.setup.scanSteps ?? backend.setup.mode !== 'aws',
      notes: backend.setup.notes ?? [],
    }),
  );
  app.get('/api/queues', async (c) => c.json(await backend.queues(Number(c.req.query('since') ?? 0) || 0)));
  app.get('/api/queues/:id/dead-letters', async (c) =>
    c.json(await backend.deadLetters(c.req.param('id'), { refresh: c.req.query('refresh') === '1' })),
  );
  app.get('/api/queues/:id/dead-letters/:messageId', async (c) =>
    c.json(await backend.message(c.req.param('id'), c.req.param('messageId'))),
  );
  app.post('/api/queues/:id/redrive', async (c) => {
    const body = await readJson(c);
    if (typeof body.dryRun !== 'boolean') throw new ConsoleRequestError(400, 'dryRun must be true or false');
    if (body.planId !== undefined && typeof body.planId !== 'string') {
      throw new ConsoleRequestError(400, 'planId must be a string');
    }
    return c.json(
      await backend.redrive(c.req.param('id'), {
        dryRun: body.dryRun,
        filter: filterOf(body.filter),
        ...(typeof body.planId === 'string' ? { planId: body.planId } : {}),
      }),
    );
  });
  app.get('/api/redrives/:id/verify', async (c) => c.json(await backend.verify(c.req.param('id'))));
  app.get('/api/jobs', async (c) => {
    const q = (name: string) => {
      const value = c.req.query(name);
      return value === undefined || value === '' ? undefined : value;
    };
    const steps = q('steps')
      ?.split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    return c.json(
      await backend.job({
        type: q('type') ?? '',
        ...(q('key') === undefined ? {} : { key: q('key') }),
        ...(q('source') === undefined ? {} : { source: q('source') }),
        ...(q('id') === undefined ? {} : { id: q('id') }),
        ...(steps === undefined ? {} : { steps }),
      }),
    );
  });
  app.notFound((c) => c.json({ error: 'not found' }, 404));
  return app;
}

async function readJson(c: Context): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw new ConsoleRequestError(400, 'the body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ConsoleRequestError(400, 'the body must be a JSON object');
  }
  return body as Record<string, unknown>;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/**
 * Starts the backend's sampling and serves the console.
 * @throws when the port cannot be bound (e.g. `EADDRINUSE`) or a page file is missing.
 */
export async function startConsoleServer(options: ConsoleServerOptions): Promise<ConsoleServer> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? randomBytes(32).toString('base64url');
  const assets = await loadConsoleAssets();
  // The app needs the port (Host check, cookie name), known once listening: built then.
  let app: Hono | undefined;
  const server = createAdaptorServer({ fetch: (request, env) => (app as Hono).fetch(request, env) });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const allowedHosts = isLoopback(host)
    ? new Set(['127.0.0.1', 'localhost', '[::1]', hostForUrl(host)].map((name) => `${name}:${port}`))
    : undefined;
  // Cookies are not kept apart by port: one name per console.
  app = createConsoleApp(options.backend, assets, {
    token,
    allowedHosts,
    cookieName: `sqs_jobs_console_${port}`,
  });
  await options.backend.start();
  const origin = `http://${hostForUrl(host)}:${port}`;
  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    port,
    async close() {
      await options.backend.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
    },
  };
}
