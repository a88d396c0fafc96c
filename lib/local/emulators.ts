/**
 * The SQS and DynamoDB endpoints of a local run: embedded emulators started in this process on
 * free ports (fauxqs for SQS, dynalite for DynamoDB), or endpoints of emulators running
 * elsewhere (moto server, LocalStack...) given by option or environment variable.
 *
 * Environment variables (an option of the same meaning wins over them):
 * - `SQS_JOBS_ENDPOINT_URL`: one endpoint serving both SQS and DynamoDB (moto server, LocalStack);
 * - `SQS_JOBS_SQS_ENDPOINT`, `SQS_JOBS_DYNAMODB_ENDPOINT`: per service; each wins over
 *   `SQS_JOBS_ENDPOINT_URL` for its service.
 * A service with no endpoint gets its embedded emulator.
 */

import { existsSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BuildAppOptions, FauxqsServer } from 'fauxqs';
import { isValidSqsText } from '../core/characters.ts';
import { DynaliteTransactions } from './dynamodb-transactions.ts';
import { LocalRuntimeError } from './errors.ts';

/** Names of the environment variables read by {@link resolveEndpointOptions}. */
export const ENDPOINT_ENV = {
  /** One endpoint for both services. */
  shared: 'SQS_JOBS_ENDPOINT_URL',
  /** SQS endpoint; wins over `shared`. */
  sqs: 'SQS_JOBS_SQS_ENDPOINT',
  /** DynamoDB endpoint; wins over `shared`. */
  dynamodb: 'SQS_JOBS_DYNAMODB_ENDPOINT',
} as const;

/** Endpoints chosen by the caller; an absent service gets its embedded emulator. */
export interface EndpointOptions {
  /** One endpoint URL for both SQS and DynamoDB (e.g. `http://localhost:5000` for moto server). */
  readonly endpointUrl?: string;
  /** SQS endpoint URL; wins over `endpointUrl`. */
  readonly sqsEndpoint?: string;
  /** DynamoDB endpoint URL; wins over `endpointUrl`. */
  readonly dynamodbEndpoint?: string;
}

/**
 * Ports of a local run's endpoints on 127.0.0.1 (the ones printed, and in the queue URLs). A fixed
 * port keeps the endpoints and queue URLs the same from one start to the next; 0 takes any free
 * port.
 */
export interface EmulatorPorts {
  /**
   * Port of the SQS endpoint: the local runtime's proxy in front of the SQS emulator (or of the
   * external endpoint), which the functions, the printed commands and the queue URLs use. 0–65535.
   * @default 0 (any free port)
   */
  readonly sqs?: number;
  /** Port of the embedded DynamoDB emulator (dynalite), 0–65535; ignored with an external DynamoDB endpoint. @default 0 (any free port) */
  readonly dynamodb?: number;
  /** Port of the embedded EventBridge Scheduler emulator, 0–65535. @default 0 (any free port) */
  readonly scheduler?: number;
}

/**
 * The error of a fixed port in use: names the port, the service and the CLI option that changes it.
 * @param option the `sqs-jobs local` flag, e.g. `--sqs-port`.
 */
export function portInUseError(
  service: string,
  port: number,
  option: string,
  cause: unknown,
): LocalRuntimeError {
  return new LocalRuntimeError(
    `port ${port} of the local ${service} endpoint is already in use (another \`sqs-jobs local\`, or another emulator?): stop what listens there, or choose another port with ${option} <n> (0 takes any free port)`,
    { cause, context: { service, port } },
  );
}

/** Whether `error` is Node's "address already in use" of a listen. */
export const isAddressInUse = (error: unknown): boolean =>
  (error as { code?: unknown } | undefined)?.code === 'EADDRINUSE';

/** The endpoints in use and where they come from. */
export interface Endpoints {
  /** SQS endpoint URL, e.g. `http://127.0.0.1:40123`. */
  readonly sqs: string;
  /** DynamoDB endpoint URL. */
  readonly dynamodb: string;
  /** Whether each endpoint is an emulator embedded in this process. */
  readonly embedded: { readonly sqs: boolean; readonly dynamodb: boolean };
}

/** Started (or attached) emulators. */
export interface RunningEmulators {
  readonly endpoints: Endpoints;
  /** The embedded fauxqs server (queue inspection), when SQS is embedded. */
  readonly fauxqs: EmbeddedSqs | undefined;
  /** Stops the embedded emulators (no-op for external endpoints). Idempotent. */
  stop(): Promise<void>;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function checkUrl(url: string, source: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http(s)');
  } catch (cause) {
    throw new LocalRuntimeError(`${source} is not an http(s) URL: ${url}`, {
      cause,
      context: { url, source },
    });
  }
  return url.replace(/\/+$/, '');
}

/**
 * The external endpoints requested by options, else by environment variables
 * ({@link ENDPOINT_ENV}); undefined for a service that should be embedded.
 * @throws {LocalRuntimeError} when a given endpoint is not an http(s) URL.
 */
export function resolveEndpointOptions(
  options: EndpointOptions = {},
  env: Readonly<Record<string, string | undefined>> = process.env,
): { sqs: string | undefined; dynamodb: string | undefined } {
  const pick = (option: string | undefined, optionName: string, envName: string): string | undefined => {
    const candidates: [string | undefined, string][] = [
      [nonEmpty(option), `option ${optionName}`],
      [nonEmpty(options.endpointUrl), 'option endpointUrl'],
      [nonEmpty(env[envName]), `env ${envName}`],
      [nonEmpty(env[ENDPOINT_ENV.shared]), `env ${ENDPOINT_ENV.shared}`],
    ];
    const found = candidates.find(([value]) => value !== undefined);
    return found ? checkUrl(found[0] as string, found[1]) : undefined;
  };
  return {
    sqs: pick(options.sqsEndpoint, 'sqsEndpoint', ENDPOINT_ENV.sqs),
    dynamodb: pick(options.dynamodbEndpoint, 'dynamodbEndpoint', ENDPOINT_ENV.dynamodb),
  };
}

/**
 * Loads an emulator package on first use: fauxqs and dynalite are optional peer dependencies of
 * the published package (a Lambda worker or a producer never needs them), installed by a project
 * that runs its stack locally (`npm install --save-dev fauxqs dynalite`).
 * @throws {LocalRuntimeError} naming the package and how to install it (or to use an endpoint instead).
 */
async function loadEmulator<T>(
  name: 'fauxqs' | 'dynalite',
  service: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (cause) {
    const code = (cause as { code?: unknown }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw cause;
    throw new LocalRuntimeError(
      `the embedded ${service} emulator (${name}) is not installed: run \`npm install --save-dev fauxqs dynalite\` in your project (fauxqs needs Node >= 22.5), or give an endpoint (--endpoint, ${ENDPOINT_ENV.shared})`,
      { cause, context: { package: name } },
    );
  }
}

type DynaliteFactory = (options: {
  createTableMs?: number;
  deleteTableMs?: number;
  updateTableMs?: number;
}) => Server;

/**
 * Most time `stop` waits for requests dynalite is still handling, in milliseconds. Generous: on a
 * saturated 2-core machine a handler can take more than 10 s, and one cut off by the database
 * closing ends the process.
 */
const DYNALITE_DRAIN_MS = 60_000;

/**
 * Starts dynalite (in-process, in-memory) on 127.0.0.1, on `port` (0: a free port), with table
 * changes that take no time (`createTableMs: 0`). A port in use rejects with Node's `EADDRINUSE`.
 *
 * `stop` shuts down in order: no new requests (answered 503), then waits (up to 60 s) for the
 * requests dynalite is still handling, then closes the server and every connection, and only then
 * does dynalite close its database. A handler still running when the database closes throws `Database is closed`
 * from a callback (an uncaught exception that ends the process), which is what happened when
 * a local run stopped at its deadline with function threads mid-request. A request counts as
 * handled when dynalite ends its response (`res.end`), not when its socket closes: a terminated
 * function thread's socket closes while the handler is still at work.
 */
export async function startDynalite(port = 0): Promise<{ url: string; stop(): Promise<void> }> {
  const dynalite = await loadEmulator(
    'dynalite',
    'DynamoDB',
    async () => createRequire(import.meta.url)('dynalite') as DynaliteFactory,
  );
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  let handling = 0;
  // TransactWriteItems, which dynalite lacks (dynamodb-transactions.ts); set once listening.
  let transactions = new DynaliteTransactions('http://127.0.0.1:0');
  let drained: (() => void) | undefined;
  let stopping = false;
  // dynalite's own request handlers run behind one gate: once stopping, a request that arrives
  // on a connection still open (keep-alive) is answered 503 without reaching dynalite, so no
  // handler can start after the drain and meet a closed database; every other request is counted
  // until its response ends.
  const handlers = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (stopping) {
      response.writeHead(503, { 'content-type': 'application/x-amz-json-1.0', connection: 'close' });
      response.end(
        '{"__type":"com.amazonaws.dynamodb.v20120810#ServiceUnavailableException","message":"the local DynamoDB emulator is stopping"}',
      );
      return;
    }
    handling += 1;
    const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse;
    let ended = false;
    const done = () => {
      if (ended) return;
      ended = true;
      handling -= 1;
      if (handling === 0) drained?.();
    };
    response.end = ((...args: unknown[]) => {
      done();
      return end(...args);
    }) as ServerResponse['end'];
    // dynalite starts its handler once the body is read: a request whose connection went away
    // before that never gets a response, and nothing of it runs.
    response.once('close', () => {
      if (!request.complete) done();
    });
    transactions.route(request, response, (req, res) => {
      for (const handler of handlers) handler.call(server, req, res);
    });
    // dynalite rethrows any error of the request stream (\`req.on('error', (err) => { throw err })\`):
    // a client that goes away mid-body (a function thread killed during its request) would end
    // the process with an uncaught ECONNRESET. Such a request never gets a response anyway.
    request.removeAllListeners('error');
    request.on('error', () => {});
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const listening = (server.address() as AddressInfo).port;
  transactions = new DynaliteTransactions(`http://127.0.0.1:${listening}`);
  let stopped: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${listening}`,
    stop() {
      stopped ??= (async () => {
        // No request starts from now on (the gate answers 503). The server is closed only once
        // the running handlers are done: dynalite closes its database as soon as the server has
        // no connection left, and a terminated function thread's connection goes away while
        // its request is still being handled.
        stopping = true;
        if (handling > 0) {
          let timer: NodeJS.Timeout | undefined;
          await new Promise<void>((resolve) => {
            drained = resolve;
            timer = setTimeout(resolve, DYNALITE_DRAIN_MS);
          });
          clearTimeout(timer);
        }
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await closed;
      })();
      return stopped;
    },
  };
}

/** URL of a file of the installed fauxqs package (its `exports` only name the entry point). */
function fauxqsFileUrl(file: string): string | undefined {
  try {
    return new URL(file, import.meta.resolve('fauxqs')).href;
  } catch {
    const dirs = createRequire(import.meta.url).resolve.paths('fauxqs') ?? [];
    const dir = dirs.find((candidate) => existsSync(join(candidate, 'fauxqs', 'package.json')));
    return dir === undefined ? undefined : pathToFileURL(join(dir, 'fauxqs', 'dist', file)).href;
  }
}

/** Outcome of {@link alignFauxqsBodyCharacters}. */
export type FauxqsCharacterCheck = 'aligned' | 'already-aligned' | 'not-found';

/**
 * Makes the embedded fauxqs take the message body characters SQS takes. fauxqs 2.4 checks bodies
 * with `/[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD]/` (its `INVALID_MESSAGE_BODY_CHAR`, in
 * `dist/sqs/sqsTypes.js`, used by SendMessage, SendMessageBatch and its programmatic `sendMessage`):
 * without the regex `u` flag and the `#x10000–#x10FFFF` range, so it refuses every character
 * above U+FFFF (an emoji: `InvalidMessageContents`), which SQS takes (SendMessage API reference,
 * MessageBody). A job whose data holds an emoji would be dead-lettered locally only.
 *
 * The shim replaces that regex's `test` with the SQS rule of lib/core/characters.ts (lone
 * surrogates, U+FFFE, U+FFFF and C0 controls still refused, as on SQS). It changes the regex object
 * fauxqs shares in this process (every fauxqs server of the process), not any file on disk; it is
 * idempotent, and does nothing once fauxqs takes astral characters itself.
 *
 * @returns `aligned` when the shim was applied now, `already-aligned` when fauxqs already takes an
 *   emoji (an earlier call, or a fixed fauxqs), `not-found` when this fauxqs has no such check.
 */
export async function alignFauxqsBodyCharacters(): Promise<FauxqsCharacterCheck> {
  const url = fauxqsFileUrl('./sqs/sqsTypes.js');
  if (url === undefined) return 'not-found';
  let check: unknown;
  try {
    check = ((await import(url)) as { INVALID_MESSAGE_BODY_CHAR?: unknown }).INVALID_MESSAGE_BODY_CHAR;
  } catch {
    return 'not-found';
  }
  if (!(check instanceof RegExp)) return 'not-found';
  if (!check.test('\u{1F600}')) return 'already-aligned';
  Object.defineProperty(check, 'test', {
    value: (text: unknown): boolean => !isValidSqsText(String(text)),
    configurable: true,
    writable: true,
  });
  return 'aligned';
}

/** The embedded SQS emulator (fauxqs) of a local run. */
export interface EmbeddedSqs {
  /** Its port on 127.0.0.1. */
  readonly port: number;
  /**
   * The messages of queue `name` by state (ready, delayed, in flight); undefined for an unknown
   * queue, or when this fauxqs version keeps its store out of reach (then queue ages are unknown).
   */
  inspectQueue(name: string): ReturnType<FauxqsServer['inspectQueue']>;
  /** Stops listening and ends every connection. */
  stop(): Promise<void>;
}

/** fauxqs's SQS store class (dist/sqs/sqsStore.js), or undefined where this version has none there. */
async function fauxqsSqsStore(): Promise<(new () => FauxqsSqsStore) | undefined> {
  const url = fauxqsFileUrl('./sqs/sqsStore.js');
  if (url === undefined) return undefined;
  try {
    const mod = (await import(url)) as { SqsStore?: new () => FauxqsSqsStore };
    return typeof mod.SqsStore === 'function' ? mod.SqsStore : undefined;
  } catch {
    return undefined;
  }
}

/** What {@link startEmbeddedSqs} uses of fauxqs's SQS store. */
interface FauxqsSqsStore {
  inspectQueue(name: string): ReturnType<FauxqsServer['inspectQueue']>;
}

/**
 * Starts fauxqs on 127.0.0.1, on any free port, with no logger. fauxqs's own `startFauxqs`
 * listens on 0.0.0.0 whatever its options (fauxqs 2.4), which would open an SQS that takes any
 * credentials to the whole network; its exported `buildApp` is listened on here instead, with
 * the SQS store made here so that queues can be inspected (queue-depth.ts).
 * @throws the error of loading fauxqs ({@link LocalRuntimeError} when not installed) or of listening.
 */
export async function startEmbeddedSqs(): Promise<EmbeddedSqs> {
  const { buildApp } = await loadEmulator('fauxqs', 'SQS', () => import('fauxqs'));
  await alignFauxqsBodyCharacters();
  const Store = await fauxqsSqsStore();
  const sqsStore = Store === undefined ? undefined : new Store();
  // buildApp makes the SNS and S3 stores it is not given (fauxqs 2.4 app.js).
  const stores = sqsStore === undefined ? undefined : ({ sqsStore } as unknown as BuildAppOptions['stores']);
  const app = buildApp({ logger: false, stores });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return {
    port,
    inspectQueue: (name) => sqsStore?.inspectQueue(name),
    stop: () => app.close(),
  };
}

/**
 * Starts the embedded emulators for the services that have no external endpoint.
 *
 * fauxqs is made to take the body characters SQS takes first ({@link alignFauxqsBodyCharacters}),
 * and listens on 127.0.0.1 only ({@link startEmbeddedSqs}). The queue URLs it builds
 * (`http://sqs.<region>.localhost:<its port>/...`) never reach a caller: the SQS proxy in front of
 * it (trace-header-proxy.ts) answers with URLs on its own origin, the documented
 * `http://127.0.0.1:<sqs port>/000000000000/<name>`.
 *
 * dynalite is started in memory with `createTableMs: 0` so tables are ACTIVE at once.
 *
 * dynalite listens on `ports.dynamodb` (0 or absent: any free port); fauxqs on any free port
 * (`ports.sqs` is the proxy's in front of it, runtime/boundary.ts). Every listener is on
 * 127.0.0.1: the emulators take any credentials, so nothing else on the network may reach them.
 * Their state lives in memory: a restart starts with no queue, message or table.
 *
 * @throws {LocalRuntimeError} when an endpoint option is malformed or an emulator cannot start
 *   (a fixed port in use: the message names the port and the CLI option that changes it).
 */
export async function startEmulators(
  options: EndpointOptions = {},
  env: Readonly<Record<string, string | undefined>> = process.env,
  ports: EmulatorPorts = {},
): Promise<RunningEmulators> {
  const external = resolveEndpointOptions(options, env);
  let fauxqs: EmbeddedSqs | undefined;
  let dynamo: { url: string; stop(): Promise<void> } | undefined;
  try {
    if (external.sqs === undefined) {
      // Any free port: the fixed SQS port is the proxy's in front of it (runtime/boundary.ts).
      fauxqs = await startEmbeddedSqs();
    }
    if (external.dynamodb === undefined) {
      const port = ports.dynamodb ?? 0;
      try {
        dynamo = await startDynalite(port);
      } catch (cause) {
        throw isAddressInUse(cause) ? portInUseError('DynamoDB', port, '--dynamodb-port', cause) : cause;
      }
    }
  } catch (cause) {
    await fauxqs?.stop();
    if (cause instanceof LocalRuntimeError) throw cause;
    throw new LocalRuntimeError(`cannot start the embedded emulators: ${(cause as Error).message}`, {
      cause,
    });
  }
  let stopped: Promise<void> | undefined;
  return {
    endpoints: {
      sqs: external.sqs ?? `http://127.0.0.1:${(fauxqs as EmbeddedSqs).port}`,
      dynamodb: external.dynamodb ?? (dynamo as { url: string }).url,
      embedded: { sqs: external.sqs === undefined, dynamodb: external.dynamodb === undefined },
    },
    fauxqs,
    stop() {
      stopped ??= Promise.all([fauxqs?.stop(), dynamo?.stop()]).then(() => undefined);
      return stopped;
    },
  };
}
