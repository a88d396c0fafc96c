/**
 * An external endpoint that is not there (`--endpoint`, or the endpoint variables): probed before
 * anything starts, recognised in an error that stops the run, and named in one line.
 */
import { connect } from 'node:net';
import { ENDPOINT_ENV } from '../../local/emulators.ts';

/** Socket errors that mean an endpoint is not there (nothing listening, unknown host, no route). */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'ECONNRESET',
]);

/** How long the probe waits for a TCP connection, in ms. */
const PROBE_TIMEOUT_MS = 5_000;

/** The socket error code anywhere in an error's cause chain (or an AggregateError's errors). */
export function unreachableCode(err: unknown, depth = 0): string | undefined {
  if (depth > 8 || typeof err !== 'object' || err === null) return undefined;
  const { code, cause, errors, name } = err as {
    code?: unknown;
    cause?: unknown;
    errors?: unknown;
    name?: unknown;
  };
  if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return code;
  if (name === 'TimeoutError' && depth > 0) return 'ETIMEDOUT';
  for (const inner of [cause, ...(Array.isArray(errors) ? errors : [])]) {
    const found = unreachableCode(inner, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** One line for an unreachable endpoint: which one, what failed, what to check. */
export function unreachableMessage(endpoints: readonly string[], code: string): string {
  const which = endpoints.length === 0 ? 'the endpoint' : `the endpoint ${endpoints.join(' / ')}`;
  return `cannot reach ${which} (${code}): check that it is running and reachable at that address (--endpoint, env ${ENDPOINT_ENV.shared}, ${ENDPOINT_ENV.sqs}, ${ENDPOINT_ENV.dynamodb})`;
}

/**
 * Checks that each external endpoint accepts a TCP connection, so an endpoint with nothing
 * listening is reported at once, before synthesis and boot. (Not `fetch`: it refuses some ports.)
 * @returns the socket error code of the first unreachable one, with its URL.
 */
export async function probeEndpoints(
  endpoints: readonly string[],
): Promise<{ url: string; code: string } | undefined> {
  for (const url of endpoints) {
    const { hostname, port, protocol } = new URL(url);
    const code = await new Promise<string | undefined>((resolve) => {
      const socket = connect({
        host: hostname.replace(/^\[|\]$/g, ''),
        port: Number(port || (protocol === 'https:' ? 443 : 80)),
      });
      socket.setTimeout(PROBE_TIMEOUT_MS, () => {
        socket.destroy();
        resolve('no answer within 5 s');
      });
      socket.once('connect', () => {
        socket.destroy();
        resolve(undefined);
      });
      // Anything that is not a socket error is left for the run itself to report.
      socket.once('error', (err) => resolve(unreachableCode(err)));
    });
    if (code) return { url, code };
  }
  return undefined;
}
