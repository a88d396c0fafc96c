/**
 * Which network errors are transient: the one list of the error codes (`error.code`) that Node,
 * libuv and undici set on a failed connection or request, every one of which a retry can outlive.
 * classifyError (errors.ts) calls them transient; ops and the CLI word "cannot reach ..." lines
 * with the subset {@link UNREACHABLE_CODES}; the client keeps its own typed subset for credential
 * provider messages (job-client.ts). A code missing here is classified by the other rules (an
 * unknown error is transient, bounded by the job's `maxAttempts`), so adding one never makes a
 * retry loop forever: every retry path is bounded by attempts, never by the code.
 *
 * Sources, per code:
 * - Node, "Common system errors" (https://nodejs.org/api/errors.html#common-system-errors):
 *   ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT, ENOTFOUND (ENOTFOUND: DNS, also for a failed
 *   `dns.lookup`, https://nodejs.org/api/dns.html#dnslookuphostname-options-callback).
 * - libuv's error constants, which Node reports as `code` (https://docs.libuv.org/en/v1.x/errors.html):
 *   EAI_AGAIN "temporary failure" (getaddrinfo), ECONNABORTED "software caused connection
 *   abort", ENETDOWN "network is down", ENETUNREACH "network is unreachable", EHOSTDOWN "host is
 *   down", EHOSTUNREACH "host is unreachable".
 * - The AWS SDK's own retry list (@smithy/service-error-classification `NODEJS_TIMEOUT_ERROR_CODES`):
 *   ECONNRESET, ECONNREFUSED, EPIPE, ETIMEDOUT.
 * - undici, Node's `fetch` (https://undici.nodejs.org/#/docs/api/Errors): UND_ERR_CONNECT_TIMEOUT
 *   (ConnectTimeoutError), UND_ERR_HEADERS_TIMEOUT, UND_ERR_BODY_TIMEOUT, UND_ERR_SOCKET
 *   (SocketError), UND_ERR_CLOSED (ClientClosedError), UND_ERR_ABORTED (RequestAbortedError).
 *   `fetch` wraps them: `TypeError('fetch failed', { cause })`, hence the cause walk.
 * - ESOCKETTIMEDOUT: the read timeout of the `request` library and of clients modelled on it.
 */
import { findInChain } from './error-chain.ts';

/** Every network error code a retry can outlive (see the sources above). */
export const TRANSIENT_NETWORK_CODES = [
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ESOCKETTIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_ABORTED',
] as const;

/** One of {@link TRANSIENT_NETWORK_CODES}. */
export type TransientNetworkCode = (typeof TRANSIENT_NETWORK_CODES)[number];

const TRANSIENT: ReadonlySet<string> = new Set(TRANSIENT_NETWORK_CODES);

/**
 * The codes that say an endpoint could not be reached, or dropped the connection: what an
 * operator's "cannot reach X: is it running, is the address right?" line names (ops/errors.ts,
 * ops/table-errors.ts, `npm start`'s endpoint probe). Deliberately narrower than the transient
 * list: a timeout of headers or body, or a request aborted by the caller, reached the endpoint,
 * and is better reported as the failed request it is.
 */
export const UNREACHABLE_CODES: ReadonlySet<string> = new Set<TransientNetworkCode>([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

/** True when `code` (an error's `code`) is a network failure a retry can outlive. */
export function isTransientNetworkCode(code: unknown): code is TransientNetworkCode {
  return typeof code === 'string' && TRANSIENT.has(code);
}

/**
 * The first network code of `codes` on `error`, its `cause` chain or an AggregateError's
 * `errors` (depth first, at most `maxDepth` levels below `error`).
 * @param codes which codes count; default every transient one, {@link UNREACHABLE_CODES} for operator messages.
 * @param maxDepth deepest level searched (0: `error` itself); default 5.
 * @returns the code, or undefined when none is found.
 */
export function networkErrorCode(
  error: unknown,
  codes: ReadonlySet<string> = TRANSIENT,
  maxDepth = 5,
): string | undefined {
  return findInChain(error, (node) => codeIn(node, codes), { maxDepth, aggregate: true });
}

/** `node.code` when it is one of `codes`. */
function codeIn(node: object, codes: ReadonlySet<string>): string | undefined {
  const { code } = node as { code?: unknown };
  return typeof code === 'string' && codes.has(code) ? code : undefined;
}
