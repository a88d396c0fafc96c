import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { type FaultAnswer, faultAnswer } from './aws-fault-answers.ts';
import {
  AWS_FAULT_KINDS,
  type AwsAction,
  type AwsFaultKind,
  type AwsFaultRates,
  awsActionOf,
  faultKindsFor,
  isResponseLost,
  NO_AWS_FAULTS,
  pickAwsFault,
  resolveAwsFaultRates,
} from './aws-faults.ts';
import { seededRandom } from './faults.ts';
import { forwardHeaders, readAll } from './http-forward.ts';

/** Header that exempts a request from fault injection (not forwarded). */
export const FAULT_EXEMPT_HEADER = 'x-sqs-jobs-fault-exempt';

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
