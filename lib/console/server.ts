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
 * - the random per-start key is presented once, in the printed URL (`/?token=`); that opens a
 *   session (lib/console/sessions.ts): a cookie that is not the key, and a page secret the page
 *   keeps in `sessionStorage`. Every API call needs the page secret (or the key) in the
 *   `x-sqs-jobs-token` header; the cookie alone, which other servers on 127.0.0.1 receive too,
 *   opens only the page's static files. Without it the answer is 403;
 * - no GET changes anything on a queue: whatever receives messages (a DLQ read raises receive
 *   counts and holds messages for a while) is a POST, like a redrive;
 * - POSTs need a JSON body of at most {@link CONSOLE_MAX_BODY_BYTES} (413 beyond, refused while it
 *   arrives, never read whole) and an `Origin` equal to the console's own; a cross-site form
 *   can send neither the header nor that Origin;
 * - `--read-only` refuses redrives (the page hides them); reads still work;
 * - answers carry no credential: the backend builds every field it returns, errors are messages
 *   only; `Referrer-Policy: no-referrer` keeps the key out of any Referer, and a strict
 *   Content-Security-Policy allows only the console's own scripts.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { getCookie, setCookie } from 'hono/cookie';
import { OpsError } from '../ops/errors.ts';
import { loadConsoleAssets } from './assets.ts';
import { ConsoleRequestError } from './backend/errors.ts';
import type { ConsoleBackend } from './backend.ts';
import { addApiRoutes } from './routes.ts';
import { ConsoleSessions } from './sessions.ts';

/** Header carrying the page secret (or the key) on API calls. */
export const TOKEN_HEADER = 'x-sqs-jobs-token';

/**
 * Largest request body accepted, bytes (1 MiB): the largest body the page sends is a redrive's
 * filter, a few KB even with hundreds of job ids. Larger bodies get 413 as soon as the
 * `Content-Length` says so, or (chunked) once this many bytes arrived; nothing more is kept.
 */
export const CONSOLE_MAX_BODY_BYTES = 1024 * 1024;

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

function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host === 'localhost' || host.startsWith('127.');
}

function hostForUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

/** What the middleware hands to the page's route: the page secret of a session it just opened. */
type ConsoleEnv = { Variables: { pageSecret: string | undefined } };

/** Answer of a request the credentials do not cover. */
const NEEDS_KEY =
  'forbidden: this console needs its access token; open the URL that sqs-jobs console printed (it ends in ?token=...)';

/**
 * Builds the Hono app (exported for tests that call `app.request` without a socket).
 * `options.token` is the key; the browser sessions opened with it live in the app.
 */
export function createConsoleApp(
  backend: ConsoleBackend,
  assets: Awaited<ReturnType<typeof loadConsoleAssets>>,
  options: {
    readonly token: string;
    readonly allowedHosts: ReadonlySet<string> | undefined;
    readonly cookieName: string;
  },
): Hono<ConsoleEnv> {
  const sessions = new ConsoleSessions(options.token);
  const app = new Hono<ConsoleEnv>();
  const limitBody = bodyLimit({
    maxSize: CONSOLE_MAX_BODY_BYTES,
    onError: (c) => {
      // The rest of the body is not read: close the connection after this answer.
      c.header('connection', 'close');
      return c.json(
        { error: `request body too large: the console accepts at most ${CONSOLE_MAX_BODY_BYTES} bytes` },
        413,
      );
    },
  });

  app.use('*', async (c, next) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.header(name, value);
    const host = c.req.header('host') ?? '';
    if (options.allowedHosts !== undefined && !options.allowedHosts.has(host.toLowerCase())) {
      return c.text('forbidden: unexpected Host header (open the URL sqs-jobs console printed)\n', 403);
    }
    const header = c.req.header(TOKEN_HEADER);
    const cookie = getCookie(c, options.cookieName);
    const apiAllowed = sessions.allows(header, cookie);
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      // Reads that receive and state changes: the header (never the cookie alone) and our own Origin.
      if (!apiAllowed) return c.json({ error: 'forbidden: missing or wrong token' }, 403);
      if (c.req.header('origin') !== `http://${host}`) {
        return c.json({ error: 'forbidden: cross-origin request' }, 403);
      }
      if (!(c.req.header('content-type') ?? '').startsWith('application/json')) {
        return c.json({ error: 'send JSON (content-type: application/json)' }, 415);
      }
      return limitBody(c, next);
    }
    if (c.req.path.startsWith('/api/')) {
      if (!apiAllowed) return c.json({ error: NEEDS_KEY }, 403);
      return next();
    }
    // The page and its files: for the key (in the URL, once), an open session's cookie, or a
    // client holding the key. Only the answer to the key carries a page secret.
    if (c.req.path === '/' && sessions.isKey(c.req.query('token'))) {
      const session = sessions.open();
      setCookie(c, options.cookieName, session.id, { httpOnly: true, sameSite: 'Strict', path: '/' });
      c.set('pageSecret', session.secret);
      return next();
    }
    if (sessions.isSession(cookie) || apiAllowed) return next();
    return c.text(`${NEEDS_KEY}\n`, 403);
  });

  app.onError((error, c) => {
    if (error instanceof ConsoleRequestError) return c.json({ error: error.message }, error.status);
    if (error instanceof OpsError) return c.json({ error: error.message, code: error.code }, 502);
    return c.json(
      { error: `unexpected failure: ${error instanceof Error ? error.message : String(error)}` },
      500,
    );
  });

  // The page carries no data and no title (the page reads them with its secret); its secret only
  // in the answer to the key.
  app.get('/', (c) => c.html(assets.index.replace('__SQS_JOBS_TOKEN__', c.get('pageSecret') ?? '')));
  for (const [path, file] of assets.files) {
    app.get(path, (c) => c.body(new Uint8Array(file.body), 200, { 'content-type': file.type }));
  }

  addApiRoutes(app, backend);
  app.notFound((c) => c.json({ error: 'not found' }, 404));
  return app;
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
  let app: Hono<ConsoleEnv> | undefined;
  const server = createAdaptorServer({
    fetch: (request, env) => (app as Hono<ConsoleEnv>).fetch(request, env),
  });
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
