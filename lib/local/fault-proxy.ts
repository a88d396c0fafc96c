/**
 * A fault-injecting HTTP proxy in front of an SQS and/or DynamoDB endpoint (an embedded emulator,
 * moto server...): every request is forwarded as it came (method, path, headers, body), except a
 * seeded share of the requests of some actions, which are answered with the error AWS would send
 * instead, either without forwarding (nothing happened) or after forwarding (it happened, the
 * response is lost: the SDK retries an operation that already took effect).
 *
 * The action of a request is read the way AWS reads it: `X-Amz-Target` (`DynamoDB_20120810.PutItem`,
 * `AmazonSQS.SendMessage`: the JSON protocols), else the `Action` parameter of a query-protocol
 * request (form body or query string). Errors are answered in the protocol of the request:
 * JSON 1.0 with `__type` (and `x-amzn-query-error` for SQS), or the SQS query XML `ErrorResponse`.
 *
 * Fault kinds ({@link AWS_FAULT_KINDS}) and the error each answers (AWS API references:
 * DynamoDB "Common Errors" and "Error handling with DynamoDB"; SQS "Common Errors"):
 * - `dynamodbThroughputExceeded`: 400 `ProvisionedThroughputExceededException`, not forwarded;
 * - `dynamodbThrottling`: 400 `ThrottlingException`, not forwarded;
 * - `dynamodbInternalError`: 500 `InternalServerError`, not forwarded;
 * - `dynamodbUnavailable`: 503 `ServiceUnavailable`, not forwarded;
 * - `dynamodbResponseLost`: a write (PutItem, UpdateItem, DeleteItem, BatchWriteItem,
 *   TransactWriteItems) is forwarded and done, then answered 500 `InternalServerError`;
 * - `sqsSendError`: SendMessage / SendMessageBatch answered 500 `InternalError`, not forwarded;
 * - `sqsSendResponseLost`: SendMessage / SendMessageBatch forwarded (the messages are on the
 *   queue), then answered 500 `InternalError`;
 * - `sqsReceiveError`: ReceiveMessage answered 503 `ServiceUnavailable`, not forwarded (a lost
 *   receive response is not injected: it would only hide messages for a visibility timeout);
 * - `sqsDeleteError`: DeleteMessage / DeleteMessageBatch answered 500 `InternalError`, not forwarded;
 * - `sqsDeleteResponseLost`: DeleteMessage / DeleteMessageBatch forwarded (deleted), then 500.
 * Every other action (CreateQueue, GetQueueAttributes, ChangeMessageVisibility, Scan, DescribeTable...)
 * is always forwarded untouched.
 *
 * A request carrying the header {@link FAULT_EXEMPT_HEADER} is never faulted (the header is not
 * forwarded): the harness's own clients (provisioning, queue depth, reading the results) use it,
 * so only the system under test meets the faults. {@link exemptFromFaults} adds it to an SDK client.
 *
 * Decisions come from a seeded generator ({@link seededRandom}), one draw per faultable request in
 * arrival order: the same seed and the same request sequence give the same faults.
 */
import { randomUUID } from 'node:crypto';
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { seededRandom } from './faults.ts';
import { forwardHeaders, readAll } from './http-forward.ts';

/** Header that exempts a request from fault injection (not forwarded). */
export const FAULT_EXEMPT_HEADER = 'x-sqs-jobs-fault-exempt';

/** Kinds of injected AWS API faults, in the order they take slices of [0, 1). */
export const AWS_FAULT_KINDS = [
  'dynamodbThroughputExceeded',
  'dynamodbThrottling',
  'dynamodbInternalError',
  'dynamodbUnavailable',
  'dynamodbResponseLost',
  'sqsSendError',
  'sqsSendResponseLost',
  'sqsReceiveError',
  'sqsDeleteError',
  'sqsDeleteResponseLost',
] as const;
/** One kind of injected AWS API fault. */
export type AwsFaultKind = (typeof AWS_FAULT_KINDS)[number];

/** Probability per request of each kind, among the requests of the actions it applies to. */
export type AwsFaultRates = Readonly<Record<AwsFaultKind, number>>;

/** No faults. */
export const NO_AWS_FAULTS: AwsFaultRates = Object.freeze(
  Object.fromEntries(AWS_FAULT_KINDS.map((k) => [k, 0])) as Record<AwsFaultKind, number>,
);

/** Short labels of the kinds, for reports. */
export const AWS_FAULT_LABELS: Readonly<Record<AwsFaultKind, string>> = {
  dynamodbThroughputExceeded: 'DynamoDB 400 ProvisionedThroughputExceeded',
  dynamodbThrottling: 'DynamoDB 400 ThrottlingException',
  dynamodbInternalError: 'DynamoDB 500',
  dynamodbUnavailable: 'DynamoDB 503',
  dynamodbResponseLost: 'DynamoDB write done, response lost (500)',
  sqsSendError: 'SQS send 500',
  sqsSendResponseLost: 'SQS send done, response lost (500)',
  sqsReceiveError: 'SQS receive 503',
  sqsDeleteError: 'SQS delete 500',
  sqsDeleteResponseLost: 'SQS delete done, response lost (500)',
};

const DYNAMODB_DATA_ACTIONS = new Set([
  'GetItem',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'Query',
  'Scan',
  'BatchGetItem',
  'BatchWriteItem',
  'TransactGetItems',
  'TransactWriteItems',
]);
const DYNAMODB_WRITE_ACTIONS = new Set([
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
]);
const SQS_SEND = new Set(['SendMessage', 'SendMessageBatch']);
const SQS_DELETE = new Set(['DeleteMessage', 'DeleteMessageBatch']);

/** The service and action of a request. */
export interface AwsAction {
  readonly service: 'sqs' | 'dynamodb' | 'unknown';
  /** e.g. `SendMessage`, `PutItem`; '' when unknown. */
  readonly action: string;
  /** `json` (X-Amz-Target) or `query` (Action parameter). */
  readonly protocol: 'json' | 'query';
}

/**
 * Reads the service and action of a request: `X-Amz-Target` first (JSON protocols), else the
 * `Action` parameter of the query string or of a form-encoded body (SQS query protocol).
 */
export function awsActionOf(headers: IncomingHttpHeaders, url: string, body: Buffer): AwsAction {
  const target = headers['x-amz-target'];
  if (typeof target === 'string' && target.includes('.')) {
    const [prefix, action = ''] = target.split('.', 2);
    if (prefix?.startsWith('DynamoDB_')) return { service: 'dynamodb', action, protocol: 'json' };
    if (prefix === 'AmazonSQS') return { service: 'sqs', action, protocol: 'json' };
    return { service: 'unknown', action, protocol: 'json' };
  }
  const query = new URL(url, 'http://local').searchParams.get('Action');
  const contentType = String(headers['content-type'] ?? '');
  const form = contentType.includes('application/x-www-form-urlencoded')
    ? new URLSearchParams(body.toString('utf8')).get('Action')
    : null;
  const action = form ?? query;
  // Only SQS speaks the query protocol among the services proxied here.
  return action
    ? { service: 'sqs', action, protocol: 'query' }
    : { service: 'unknown', action: '', protocol: 'query' };
}

/** The kinds that may hit a request of this action. */
export function faultKindsFor(action: AwsAction): readonly AwsFaultKind[] {
  if (action.service === 'dynamodb') {
    if (!DYNAMODB_DATA_ACTIONS.has(action.action)) return [];
    const kinds: AwsFaultKind[] = [
      'dynamodbThroughputExceeded',
      'dynamodbThrottling',
      'dynamodbInternalError',
      'dynamodbUnavailable',
    ];
    if (DYNAMODB_WRITE_ACTIONS.has(action.action)) kinds.push('dynamodbResponseLost');
    return kinds;
  }
  if (action.service === 'sqs') {
    if (SQS_SEND.has(action.action)) return ['sqsSendError', 'sqsSendResponseLost'];
    if (action.action === 'ReceiveMessage') return ['sqsReceiveError'];
    if (SQS_DELETE.has(action.action)) return ['sqsDeleteError', 'sqsDeleteResponseLost'];
  }
  return [];
}

/**
 * Picks the fault for a draw `u` in [0, 1) among `kinds`: they take consecutive slices of [0, 1)
 * by their rates, in the given order; the rest means no fault.
 */
export function pickAwsFault(
  u: number,
  kinds: readonly AwsFaultKind[],
  rates: AwsFaultRates,
): AwsFaultKind | undefined {
  let edge = 0;
  for (const kind of kinds) {
    edge += rates[kind];
    if (u < edge) return kind;
  }
  return undefined;
}

/** Whether the fault answers after forwarding the request (the operation took effect). */
export function isResponseLost(kind: AwsFaultKind): boolean {
  return (
    kind === 'dynamodbResponseLost' || kind === 'sqsSendResponseLost' || kind === 'sqsDeleteResponseLost'
  );
}

/** An error answer: status, headers, body. */
export interface FaultAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The error AWS answers for a fault kind, in the protocol of the request. */
export function faultAnswer(
  kind: AwsFaultKind,
  action: AwsAction,
  requestId: string = randomUUID(),
): FaultAnswer {
  if (action.service === 'dynamodb' || kind.startsWith('dynamodb')) {
    const [status, type, message] = ((): [number, string, string] => {
      switch (kind) {
        case 'dynamodbThroughputExceeded':
          return [
            400,
            'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
            'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
          ];
        case 'dynamodbThrottling':
          return [
            400,
            'com.amazon.coral.availability#ThrottlingException',
            'Rate of requests exceeds the allowed throughput.',
          ];
        case 'dynamodbUnavailable':
          return [
            503,
            'com.amazon.coral.availability#ServiceUnavailableException',
            'Service unavailable (injected fault)',
          ];
        default:
          return [
            500,
            'com.amazonaws.dynamodb.v20120810#InternalServerError',
            'Internal server error (injected fault)',
          ];
      }
    })();
    return {
      status,
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': requestId },
      body: JSON.stringify({ __type: type, message }),
    };
  }
  const [status, code] = kind === 'sqsReceiveError' ? [503, 'ServiceUnavailable'] : [500, 'InternalError'];
  const message =
    status === 503
      ? 'The request has failed due to a temporary failure of the server (injected fault).'
      : 'There is an internal problem with SQS (injected fault).';
  if (action.protocol === 'json') {
    return {
      status,
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-requestid': requestId,
        'x-amzn-query-error': `${code};Receiver`,
      },
      body: JSON.stringify({ __type: `com.amazonaws.sqs#${code}`, message }),
    };
  }
  return {
    status,
    headers: { 'content-type': 'text/xml', 'x-amzn-requestid': requestId },
    body: `<?xml version="1.0"?><ErrorResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><Error><Type>Receiver</Type><Code>${code}</Code><Message>${message}</Message><Detail/></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
  };
}

/** Counters of a proxy; plain JSON. */
export interface FaultProxyStats {
  /** Requests received. */
  readonly requests: number;
  /** Requests exempted by {@link FAULT_EXEMPT_HEADER}. */
  readonly exempt: number;
  /** Requests that could have been faulted (not exempt, an action some kind applies to). */
  readonly faultable: number;
  /** Faults injected, by kind. */
  readonly faults: Readonly<Record<AwsFaultKind, number>>;
  /** Faults injected, by `<service>:<action>`. */
  readonly faultsByAction: Readonly<Record<string, number>>;
  /** Requests the upstream could not answer (answered 502 to the client). */
  readonly upstreamErrors: number;
}

/** Options of {@link startFaultProxy}. */
export interface FaultProxyOptions {
  /** Endpoint to forward to, e.g. `http://127.0.0.1:4566`. */
  readonly target: string;
  /** Fault rates; missing kinds are 0. */
  readonly rates?: Partial<AwsFaultRates>;
  /** Seed of the fault decisions. @default 1 */
  readonly seed?: number;
  /** @default '127.0.0.1' */
  readonly host?: string;
}

/** A running proxy. */
export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: the endpoint to give clients instead of the target. */
  readonly url: string;
  readonly target: string;
  stats(): FaultProxyStats;
  /** Changes the rates from now on (missing kinds become 0). @throws {RangeError} on a bad rate. */
  setRates(rates: Partial<AwsFaultRates>): void;
  /**
   * Injects `kind` into the next `count` requests it applies to, whatever the rates (those
   * requests draw no random number). @throws {RangeError} when `count` is not an integer >= 0.
   */
  injectNext(kind: AwsFaultKind, count?: number): void;
  /** Stops listening and ends every connection (and the requests forwarded for them). Idempotent. */
  close(): Promise<void>;
}

/**
 * Fills missing kinds with 0 and checks the rates: each in [0, 1], and the kinds that share an
 * action add up to at most 1.
 * @throws {RangeError} naming every bad rate.
 */
export function resolveAwsFaultRates(rates: Partial<AwsFaultRates> = {}): AwsFaultRates {
  const resolved = { ...NO_AWS_FAULTS, ...rates };
  const problems: string[] = [];
  for (const kind of Object.keys(resolved)) {
    if (!(AWS_FAULT_KINDS as readonly string[]).includes(kind)) problems.push(`unknown fault kind ${kind}`);
  }
  for (const kind of AWS_FAULT_KINDS) {
    const rate = resolved[kind];
    if (!Number.isFinite(rate) || rate < 0 || rate > 1)
      problems.push(`${kind} must be in [0, 1], got ${rate}`);
  }
  const samples: AwsAction[] = [
    { service: 'dynamodb', action: 'PutItem', protocol: 'json' },
    { service: 'sqs', action: 'SendMessage', protocol: 'json' },
    { service: 'sqs', action: 'DeleteMessage', protocol: 'json' },
  ];
  for (const sample of samples) {
    const kinds = faultKindsFor(sample);
    const sum = kinds.reduce((acc, k) => acc + resolved[k], 0);
    if (sum > 1 + 1e-9)
      problems.push(`${kinds.join(' + ')} add up to ${Number(sum.toFixed(6))}, more than 1`);
  }
  if (problems.length > 0) throw new RangeError(`invalid AWS fault rates: ${problems.join('; ')}`);
  return Object.freeze(resolved);
}

/**
 * Starts a proxy on a free local port in front of `target`. The `Host` header is forwarded as the
 * client sent it, so an emulator that builds URLs from it (queue URLs) names the proxy.
 * @throws {RangeError} on bad rates; the listen error.
 */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(options.target);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new RangeError(`target must be an http(s) URL, got ${options.target}`);
  }
  let rates = resolveAwsFaultRates(options.rates);
  const forced = new Map<AwsFaultKind, number>();
  const random = seededRandom(options.seed ?? 1);
  const secure = target.protocol === 'https:';
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new Agent({ keepAlive: true });
  const send = secure ? httpsRequest : httpRequest;
  const basePath = target.pathname.replace(/\/+$/, '');
  const counters = {
    requests: 0,
    exempt: 0,
    faultable: 0,
    faults: { ...NO_AWS_FAULTS } as Record<AwsFaultKind, number>,
    faultsByAction: {} as Record<string, number>,
    upstreamErrors: 0,
  };

  const answer = (res: ServerResponse, a: FaultAnswer): void => {
    if (res.destroyed || res.writableEnded) return;
    res.writeHead(a.status, { ...a.headers, 'content-length': Buffer.byteLength(a.body) });
    res.end(a.body);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readAll(req);
    counters.requests += 1;
    const exempt = req.headers[FAULT_EXEMPT_HEADER] !== undefined;
    let fault: AwsFaultKind | undefined;
    let action: AwsAction | undefined;
    if (exempt) counters.exempt += 1;
    else {
      action = awsActionOf(req.headers, req.url ?? '/', body);
      const kinds = faultKindsFor(action);
      if (kinds.length > 0) {
        counters.faultable += 1;
        fault = kinds.find((k) => (forced.get(k) ?? 0) > 0);
        if (fault) forced.set(fault, (forced.get(fault) ?? 0) - 1);
        else fault = pickAwsFault(random(), kinds, rates);
      }
    }
    if (fault && action) {
      counters.faults[fault] += 1;
      const where = `${action.service}:${action.action}`;
      counters.faultsByAction[where] = (counters.faultsByAction[where] ?? 0) + 1;
      if (!isResponseLost(fault)) {
        answer(res, faultAnswer(fault, action));
        return;
      }
    }
    const upstream = send({
      protocol: target.protocol,
      hostname: target.hostname.replace(/^\[|\]$/g, ''),
      port: target.port || (secure ? 443 : 80),
      method: req.method,
      path: `${basePath}${req.url ?? '/'}`,
      headers: forwardHeaders(req.headers, body.length, [FAULT_EXEMPT_HEADER]),
      agent,
    });
    // A client that goes away (a terminated function thread, a long poll aborted at stop) takes
    // its forwarded request with it; what the upstream already received stays done.
    const onClientGone = () => {
      if (!res.writableEnded) upstream.destroy();
    };
    res.once('close', onClientGone);
    try {
      const response = await new Promise<IncomingMessage>((resolve, reject) => {
        upstream.once('response', resolve);
        upstream.once('error', reject);
        upstream.end(body);
      });
      if (fault && action) {
        // Done upstream; the answer is lost on the way back.
        await readAll(response);
        answer(res, faultAnswer(fault, action));
        return;
      }
      const payload = await readAll(response);
      if (res.destroyed || res.writableEnded) return;
      res.writeHead(
        response.statusCode ?? 502,
        forwardHeaders(response.headers, payload.length, [FAULT_EXEMPT_HEADER]),
      );
      res.end(payload);
    } catch (error) {
      if (res.destroyed || res.writableEnded) return;
      counters.upstreamErrors += 1;
      const text = JSON.stringify({ message: `fault proxy: upstream failed: ${(error as Error).message}` });
      res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    } finally {
      res.off('close', onClientGone);
    }
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500);
        res.end();
      } else res.destroy();
    });
  });
  server.keepAliveTimeout = 60_000;
  // Long polls (20 s) must not be cut by the server's own timeouts.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    target: options.target,
    stats: () => ({
      requests: counters.requests,
      exempt: counters.exempt,
      faultable: counters.faultable,
      faults: { ...counters.faults },
      faultsByAction: { ...counters.faultsByAction },
      upstreamErrors: counters.upstreamErrors,
    }),
    setRates(next) {
      rates = resolveAwsFaultRates(next);
    },
    injectNext(kind, count = 1) {
      if (!Number.isInteger(count) || count < 0)
        throw new RangeError(`count must be an integer >= 0, got ${count}`);
      if (!(AWS_FAULT_KINDS as readonly string[]).includes(kind))
        throw new RangeError(`unknown fault kind ${kind}`);
      forced.set(kind, (forced.get(kind) ?? 0) + count);
    },
    close() {
      closed ??= (async () => {
        const done = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await done;
        agent.destroy();
      })();
      return closed;
    },
  };
}

/** Sums the stats of several proxies. */
export function sumFaultProxyStats(all: readonly FaultProxyStats[]): FaultProxyStats {
  const faults = { ...NO_AWS_FAULTS } as Record<AwsFaultKind, number>;
  const faultsByAction: Record<string, number> = {};
  let requests = 0;
  let exempt = 0;
  let faultable = 0;
  let upstreamErrors = 0;
  for (const s of all) {
    requests += s.requests;
    exempt += s.exempt;
    faultable += s.faultable;
    upstreamErrors += s.upstreamErrors;
    for (const kind of AWS_FAULT_KINDS) faults[kind] += s.faults[kind];
    for (const [k, n] of Object.entries(s.faultsByAction)) faultsByAction[k] = (faultsByAction[k] ?? 0) + n;
  }
  return { requests, exempt, faultable, faults, faultsByAction, upstreamErrors };
}

/** Something with a middleware stack: an AWS SDK v3 client. */
interface HasMiddlewareStack {
  readonly middlewareStack: {
    add(
      middleware: (
        next: (args: { request: unknown }) => Promise<unknown>,
      ) => (args: { request: unknown }) => Promise<unknown>,
      options: { step: 'build'; name: string },
    ): void;
  };
}

/**
 * Marks every request of an AWS SDK v3 client with {@link FAULT_EXEMPT_HEADER}, so a fault proxy
 * never faults it (for the harness's own clients). Returns the client.
 */
export function exemptFromFaults<C extends object>(client: C): C {
  (client as unknown as HasMiddlewareStack).middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as { headers?: Record<string, string> } | undefined;
      if (request?.headers) request.headers[FAULT_EXEMPT_HEADER] = '1';
      return next(args);
    },
    { step: 'build', name: 'sqsJobsFaultExempt' },
  );
  return client;
}
