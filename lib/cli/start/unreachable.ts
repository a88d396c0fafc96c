/**
 * An external endpoint that is not there (`--endpoint`, or the endpoint variables): probed before
 * anything starts, recognised in an error that stops the run, and named in one line.
 */
import { connect } from 'node:net';
import { findInChain } from '../../core/error-chain.ts';
import { UNREACHABLE_CODES } from '../../core/network-errors.ts';
import { ENDPOINT_ENV } from '../../local/emulators.ts';

/** How long the probe waits for a TCP connection, in ms. */
const PROBE_TIMEOUT_MS = 5_000;

/** The unreachable-endpoint code (lib/core/network-errors.ts) anywhere in an error's cause chain (or an AggregateError's errors). */
export function unreachableCode(err: unknown): string | undefined {
  return findInChain(
    err,
    (node, depth) => {
      const { code, name } = node as { code?: unknown; name?: unknown };
      if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return code;
      return name === 'TimeoutError' && depth > 0 ? 'ETIMEDOUT' : undefined;
    },
    { maxDepth: 8, aggregate: true },
  );
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
