/**
 * A fake of the sample app's external services (payment, mail, invoice) as a `node:http` server
 * on a free local port. It behaves like a well-run API that honours idempotency keys, and it
 * misbehaves on purpose at configurable rates so retries, backoff and idempotency show.
 *
 * Endpoints (JSON in, JSON out):
 * - `POST /payments` `{ bookingId, userId, amountCents }` → `201 { paymentId }`
 * - `POST /emails` `{ bookingId, to, template }` → `201 { messageId }`
 * - `POST /invoices` `{ bookingId, userId, sku, quantity }` → `201 { invoiceId }`
 * - `GET /stats` → {@link ExternalServiceStats}
 *
 * Rate limit per tenant (opt-in, `tenantRateLimit`), as a partner API enforces one: each tenant
 * (the `userId` of a payment or invoice, the `to` of an email) has a token bucket of `burst`
 * requests refilled at `requestsPerSecond`; a request finding it empty gets 429 with
 * `Retry-After` (the seconds until a token is back, at least 1) and performs nothing. It is not an
 * injected fault: it answers how hard the callers push, and is counted apart (`rateLimited`).
 *
 * Idempotency (after the IETF draft "The Idempotency-Key HTTP Header Field", and what payment
 * APIs such as Stripe do): the first request with a key performs the side effect and stores the
 * response; a later request with the same key and payload gets the stored response again
 * (header `Idempotent-Replayed: true`) and performs nothing; the same key with another payload
 * gets 422; a key whose first request is still being processed gets 409 with `Retry-After`.
 *
 * Faults, decided per request from a seeded hash of (seed, key, n-th request of that key), so a
 * run with the same seed injects the same faults into the same logical calls whatever the
 * interleaving:
 * - `timeout`: the side effect IS performed and stored, then the response hangs past the
 *   client's timeout: the nasty case where only the idempotency key keeps the retry from
 *   doing it twice;
 * - `throttle`: 429 with `Retry-After`; `unavailable`: 503; nothing performed;
 * - `badRequest`: 400; nothing performed (a permanent failure: the job is dead-lettered);
 * - `slow`: a latency spike that stays under the client timeout (not a failure);
 * - `overrun`: a delay of `overrunMs` before the request is handled as usual (side effect and
 *   answer): set above a job's time limit (and under the client timeout), the calling job runs
 *   past its `timeoutSeconds` and is aborted, while the side effect still happens later;
 * - `kill`: handled as usual (side effect, or the stored answer), and the 2xx answer carries
 *   `x-sqs-jobs-fault: kill-caller` (lib/local/faults.ts): the local runtime, started with
 *   `killOnFaultHeader`, kills the calling execution environment right then, after the side
 *   effect and before the job records it.
 *
 * Why one file: it is one fake server whose routes, idempotency store and seeded fault schedule
 * share one state.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FAULT_HEADER, KILL_CALLER_VALUE } from '../local/faults.ts';

/** Kinds of injected misbehaviour. */
export const FAULT_KINDS = [
  'timeout',
  'throttle',
  'unavailable',
  'badRequest',
  'slow',
  'overrun',
  'kill',
] as const;
/** One kind of injected misbehaviour. */
export type FaultKind = (typeof FAULT_KINDS)[number];
/**
 * Kinds that fail the calling job's run (`slow` only delays it): the request fails, or runs past
 * the job's time limit (`overrun`), or its caller is killed (`kill`).
 */
export const FAILING_FAULT_KINDS = [
  'timeout',
  'throttle',
  'unavailable',
  'badRequest',
  'overrun',
  'kill',
] as const;

/** Probability per request of each fault kind, each in [0, 1]; their sum must not exceed 1. */
export type FaultRates = Readonly<Record<FaultKind, number>>;

/** No faults at all. */
export const NO_FAULTS: FaultRates = Object.freeze({
  timeout: 0,
  throttle: 0,
  unavailable: 0,
  badRequest: 0,
  slow: 0,
  overrun: 0,
  kill: 0,
});

/** The endpoints and the side effect each performs. */
export const ENDPOINTS = {
  '/payments': { operation: 'payment', idField: 'paymentId', idPrefix: 'pay' },
  '/emails': { operation: 'email', idField: 'messageId', idPrefix: 'msg' },
  '/invoices': { operation: 'invoice', idField: 'invoiceId', idPrefix: 'inv' },
} as const;
/** A side-effecting operation of the service. */
export type Operation = (typeof ENDPOINTS)[keyof typeof ENDPOINTS]['operation'];

/** Options of {@link startExternalService}. */
export interface ExternalServiceOptions {
  /** @default 0 (a free port) */
  readonly port?: number;
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** Seed of the fault decisions. @default 1 */
  readonly seed?: number;
  /** Fault rates; missing kinds are 0. */
  readonly faults?: Partial<FaultRates>;
  /** Base latency of every request, uniform in [min, max] ms. @default { min: 1, max: 15 } */
  readonly latencyMs?: { readonly min: number; readonly max: number };
  /** Extra latency of a `slow` fault, in ms; keep it under the client timeout. @default 600 */
  readonly slowMs?: number;
  /** How long a `timeout` fault hangs before answering, in ms; keep it above the client timeout. @default 3000 */
  readonly hangMs?: number;
  /**
   * Delay of an `overrun` fault before the request is handled, in ms: above the calling job's
   * time limit, under the client timeout. @default 12000
   */
  readonly overrunMs?: number;
  /** `Retry-After` of a 429, in seconds. @default 1 */
  readonly retryAfterSeconds?: number;
  /**
   * `false` turns idempotency off (every request performs its side effect): only to prove that
   * the report catches a duplicate side effect. @default true
   */
  readonly honourIdempotencyKey?: boolean;
  /**
   * A rate limit per tenant: `requestsPerSecond` > 0, `burst` an integer >= 1 (the requests a
   * tenant may make at once after a quiet spell). Above it: 429 with `Retry-After`, nothing done.
   * @default none (no limit); `burst` defaults to `requestsPerSecond` rounded up
   */
  readonly tenantRateLimit?: TenantRateLimit;
}

/** A partner's rate limit per tenant (see {@link ExternalServiceOptions.tenantRateLimit}). */
export interface TenantRateLimit {
  /** Requests per second per tenant, > 0. */
  readonly requestsPerSecond: number;
  /** Bucket size, integer >= 1. @default `requestsPerSecond` rounded up */
  readonly burst?: number;
}

/** Counters of a running service; plain JSON. */
export interface ExternalServiceStats {
  /** Requests received on the side-effect endpoints. */
  readonly requests: number;
  /** Requests per operation. */
  readonly requestsByOperation: Readonly<Record<Operation, number>>;
  /** Requests answered from a stored response (a retry after a lost response, or a duplicate). */
  readonly replays: number;
  /** 409 answers: a key's first request was still in progress. */
  readonly conflicts: number;
  /** Injected faults by kind. */
  readonly faults: Readonly<Record<FaultKind, number>>;
  /** Injected faults that failed a request (all kinds but `slow`). */
  readonly failuresInjected: number;
  /** Injected faults per business reference (`<operation>:<bookingId>[:<template>]`). */
  readonly faultsByReference: Readonly<Record<string, readonly FaultKind[]>>;
  /** Side effects performed in total. */
  readonly sideEffects: number;
  /** Side effects per idempotency key (requests without a key count under `no-key:<n>`). */
  readonly sideEffectsByKey: Readonly<Record<string, number>>;
  /** Side effects per business reference: more than 1 means a duplicate the key did not catch. */
  readonly sideEffectsByReference: Readonly<Record<string, number>>;
  /** 429 answers of the tenant rate limit (`tenantRateLimit`); 0 without one. Not in `faults`. */
  readonly rateLimited: number;
  /** Those 429s per tenant. */
  readonly rateLimitedByTenant: Readonly<Record<string, number>>;
}

/** A running fake service. */
export interface ExternalService {
  /** Base URL, e.g. `http://127.0.0.1:41234`: the `EXTERNAL_API_URL` of the workers. */
  readonly url: string;
  readonly port: number;
  /** A copy of the counters. */
  stats(): ExternalServiceStats;
  /** Changes the fault rates from now on (missing kinds become 0). */
  setFaults(faults: Partial<FaultRates>): void;
  /** Stops the server, ending hanging requests. Idempotent. */
  close(): Promise<void>;
}

/** Thrown for options that cannot work. */
export class ExternalServiceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExternalServiceError';
  }
}

/**
 * Fills missing fault kinds with 0 and checks the rates.
 * @throws {ExternalServiceError} when a rate is outside [0, 1] or their sum exceeds 1.
 */
export function resolveFaultRates(faults: Partial<FaultRates> | undefined): FaultRates {
  const rates = { ...NO_FAULTS, ...faults };
  const problems: string[] = [];
  for (const kind of FAULT_KINDS) {
    const rate = rates[kind];
    if (!Number.isFinite(rate) || rate < 0 || rate > 1)
      problems.push(`${kind} rate must be in [0, 1], got ${rate}`);
  }
  const sum = FAULT_KINDS.reduce((acc, kind) => acc + rates[kind], 0);
  if (sum > 1 + 1e-9) problems.push(`fault rates add up to ${Number(sum.toFixed(6))}, more than 1`);
  if (problems.length > 0) throw new ExternalServiceError(`invalid fault rates: ${problems.join('; ')}`);
  return Object.freeze(rates);
}

/** A uniform number in [0, 1) from a hash of the parts: reproducible, independent of call order. */
export function seededUniform(...parts: readonly (string | number)[]): number {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}

/**
 * Picks the fault for a draw `u` in [0, 1): the kinds take consecutive slices of [0, 1) in
 * {@link FAULT_KINDS} order, the rest means no fault.
 */
export function pickFault(u: number, rates: FaultRates): FaultKind | undefined {
  let edge = 0;
  for (const kind of FAULT_KINDS) {
    edge += rates[kind];
    if (u < edge) return kind;
  }
  return undefined;
}

interface StoredResponse {
  readonly payloadHash: string;
  /** undefined while the first request is still being processed. */
  response: { status: number; body: Record<string, unknown> } | undefined;
}

const MAX_BODY_BYTES = 64 * 1024;

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed || res.writableEnded) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new ExternalServiceError('request body over 64 KiB');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Checks a tenant rate limit and fills in its burst.
 * @throws {ExternalServiceError} when `requestsPerSecond` is not > 0 or `burst` not an integer >= 1.
 */
export function resolveTenantRateLimit(limit: TenantRateLimit): Required<TenantRateLimit> {
  const { requestsPerSecond } = limit;
  if (!Number.isFinite(requestsPerSecond) || requestsPerSecond <= 0) {
    throw new ExternalServiceError(
      `tenantRateLimit.requestsPerSecond must be a number > 0, got ${requestsPerSecond}`,
    );
  }
  const burst = limit.burst ?? Math.ceil(requestsPerSecond);
  if (!Number.isInteger(burst) || burst < 1) {
    throw new ExternalServiceError(`tenantRateLimit.burst must be an integer >= 1, got ${burst}`);
  }
  return { requestsPerSecond, burst };
}

/**
 * Token buckets per tenant. `take` answers undefined when a token was taken, else the seconds
 * until one is back (the `Retry-After`, at least 1).
 */
function tenantBuckets(limit: Required<TenantRateLimit>, now: () => number) {
  const buckets = new Map<string, { tokens: number; atMs: number }>();
  return {
    take(tenant: string): number | undefined {
      const at = now();
      const bucket = buckets.get(tenant) ?? { tokens: limit.burst, atMs: at };
      bucket.tokens = Math.min(
        limit.burst,
        bucket.tokens + ((at - bucket.atMs) / 1000) * limit.requestsPerSecond,
      );
      bucket.atMs = at;
      buckets.set(tenant, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return undefined;
      }
      return Math.max(1, Math.ceil((1 - bucket.tokens) / limit.requestsPerSecond));
    },
  };
}

/** The tenant of a request: the user of a payment or invoice, the recipient of an email. */
function tenantOf(operation: Operation, body: Record<string, unknown>): string {
  return String(operation === 'email' ? body.to : body.userId);
}

function referenceOf(operation: Operation, body: Record<string, unknown>): string {
  const base = `${operation}:${String(body.bookingId)}`;
  return operation === 'email' ? `${base}:${String(body.template)}` : base;
}

const REQUIRED: Record<Operation, readonly string[]> = {
  payment: ['bookingId', 'userId', 'amountCents'],
  email: ['bookingId', 'to', 'template'],
  invoice: ['bookingId', 'userId', 'sku', 'quantity'],
};

/**
 * Starts the fake service.
 * @throws {ExternalServiceError} on invalid fault rates; the listen error when the port is taken.
 */
export async function startExternalService(options: ExternalServiceOptions = {}): Promise<ExternalService> {
  let rates = resolveFaultRates(options.faults);
  const seed = options.seed ?? 1;
  const latency = options.latencyMs ?? { min: 1, max: 15 };
  const slowMs = options.slowMs ?? 600;
  const hangMs = options.hangMs ?? 3_000;
  const overrunMs = options.overrunMs ?? 12_000;
  const retryAfterSeconds = options.retryAfterSeconds ?? 1;
  const honourKeys = options.honourIdempotencyKey ?? true;
  const limiter =
    options.tenantRateLimit === undefined
      ? undefined
      : tenantBuckets(resolveTenantRateLimit(options.tenantRateLimit), () => performance.now());

  const store = new Map<string, StoredResponse>();
  const requestsPerKey = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;
  let ids = 0;
  let anonymous = 0;
  const counters = {
    requests: 0,
    requestsByOperation: { payment: 0, email: 0, invoice: 0 } as Record<Operation, number>,
    replays: 0,
    conflicts: 0,
    faults: { ...NO_FAULTS } as Record<FaultKind, number>,
    faultsByReference: new Map<string, FaultKind[]>(),
    sideEffects: 0,
    sideEffectsByKey: new Map<string, number>(),
    sideEffectsByReference: new Map<string, number>(),
    rateLimited: 0,
    rateLimitedByTenant: new Map<string, number>(),
  };

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (closed || ms <= 0) {
        resolve();
        return;
      }
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  const stats = (): ExternalServiceStats => ({
    requests: counters.requests,
    requestsByOperation: { ...counters.requestsByOperation },
    replays: counters.replays,
    conflicts: counters.conflicts,
    faults: { ...counters.faults },
    failuresInjected: FAILING_FAULT_KINDS.reduce((acc, kind) => acc + counters.faults[kind], 0),
    faultsByReference: Object.fromEntries([...counters.faultsByReference].map(([k, v]) => [k, [...v]])),
    sideEffects: counters.sideEffects,
    sideEffectsByKey: Object.fromEntries(counters.sideEffectsByKey),
    sideEffectsByReference: Object.fromEntries(counters.sideEffectsByReference),
    rateLimited: counters.rateLimited,
    rateLimitedByTenant: Object.fromEntries(counters.rateLimitedByTenant),
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://local').pathname;
    if (req.method === 'GET' && path === '/stats') {
      sendJson(res, 200, stats());
      return;
    }
    const endpoint = ENDPOINTS[path as keyof typeof ENDPOINTS];
    if (!endpoint) {
      sendJson(res, 404, { error: `no such endpoint ${req.method} ${path}` });
      return;
    }
    if (req.method !== 'POST') {
      sendJson(res, 405, { error: 'POST only' }, { allow: 'POST' });
      return;
    }
    const text = await readBody(req);
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new Error('not an object');
      body = parsed as Record<string, unknown>;
    } catch {
      sendJson(res, 400, { error: 'body must be a JSON object' });
      return;
    }
    const missing = REQUIRED[endpoint.operation].filter((field) => body[field] === undefined);
    if (missing.length > 0) {
      sendJson(res, 400, { error: `missing ${missing.join(', ')}` });
      return;
    }
    const operation = endpoint.operation;
    counters.requests += 1;
    counters.requestsByOperation[operation] += 1;
    const reference = referenceOf(operation, body);
    // The tenant's rate limit, before anything else: a refused request does nothing and does not
    // count as a try of its key in the fault schedule (the same seed injects the same faults).
    const retryAfter = limiter?.take(tenantOf(operation, body));
    if (retryAfter !== undefined) {
      const tenant = tenantOf(operation, body);
      counters.rateLimited += 1;
      counters.rateLimitedByTenant.set(tenant, (counters.rateLimitedByTenant.get(tenant) ?? 0) + 1);
      sendJson(
        res,
        429,
        { error: 'rate limit exceeded for this tenant' },
        { 'retry-after': String(retryAfter) },
      );
      return;
    }
    const headerKey = req.headers['idempotency-key'];
    const key = typeof headerKey === 'string' && headerKey !== '' ? `${operation}:${headerKey}` : undefined;

    // Fault decision: reproducible per (seed, key or reference, n-th request of it).
    const drawKey = key ?? reference;
    const nth = (requestsPerKey.get(drawKey) ?? 0) + 1;
    requestsPerKey.set(drawKey, nth);
    const fault = pickFault(seededUniform(seed, drawKey, nth, 'fault'), rates);
    if (fault) {
      counters.faults[fault] += 1;
      const list = counters.faultsByReference.get(reference) ?? [];
      list.push(fault);
      counters.faultsByReference.set(reference, list);
    }
    const base = latency.min + seededUniform(seed, drawKey, nth, 'latency') * (latency.max - latency.min);
    await sleep(base + (fault === 'slow' ? slowMs : fault === 'overrun' ? overrunMs : 0));
    const kill: Record<string, string> = fault === 'kill' ? { [FAULT_HEADER]: KILL_CALLER_VALUE } : {};

    if (fault === 'throttle') {
      sendJson(res, 429, { error: 'slow down' }, { 'retry-after': String(retryAfterSeconds) });
      return;
    }
    if (fault === 'unavailable') {
      sendJson(res, 503, { error: 'service unavailable' });
      return;
    }
    if (fault === 'badRequest') {
      sendJson(res, 400, { error: 'rejected (injected fault)' });
      return;
    }

    const payloadHash = createHash('sha256').update(text).digest('hex');
    const stored = key && honourKeys ? store.get(key) : undefined;
    if (stored) {
      if (stored.payloadHash !== payloadHash) {
        sendJson(res, 422, { error: 'idempotency key reused with another payload' });
        return;
      }
      if (!stored.response) {
        counters.conflicts += 1;
        sendJson(res, 409, { error: 'a request with this key is in progress' }, { 'retry-after': '1' });
        return;
      }
      counters.replays += 1;
      if (fault === 'timeout') await sleep(hangMs);
      sendJson(res, stored.response.status, stored.response.body, { 'idempotent-replayed': 'true', ...kill });
      return;
    }

    const entry: StoredResponse = { payloadHash, response: undefined };
    if (key && honourKeys) store.set(key, entry);
    // The side effect.
    ids += 1;
    const effectKey = key ?? `no-key:${++anonymous}`;
    counters.sideEffects += 1;
    counters.sideEffectsByKey.set(effectKey, (counters.sideEffectsByKey.get(effectKey) ?? 0) + 1);
    counters.sideEffectsByReference.set(reference, (counters.sideEffectsByReference.get(reference) ?? 0) + 1);
    entry.response = { status: 201, body: { [endpoint.idField]: `${endpoint.idPrefix}_${ids}` } };

    if (fault === 'timeout') await sleep(hangMs);
    sendJson(res, entry.response.status, entry.response.body, kill);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      sendJson(res, 500, { error: (err as Error).message });
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    stats,
    setFaults(faults) {
      rates = resolveFaultRates(faults);
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
