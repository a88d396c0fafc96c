/**
 * `npm start` (and `npm run soak`): the command line read (./parse.ts), the external endpoints
 * checked, then the run (./run.ts). bin/start.ts wires it to the process; tests run it in-process
 * with their own {@link StartIo}.
 *
 * Exit codes: 0 every invariant holds; 1 one fails; 2 the run could not happen or complete (bad
 * flags, the stack did not start, an endpoint is unreachable, the deadline came first); 130 Ctrl-C
 * stopped the wait (partial report printed, nothing kept running). With --keep-running, Ctrl-C
 * after the report stops everything and the code is still the report's; with --no-workload, 0.
 */
import { resolveEndpointOptions } from '../../local/emulators.ts';
import { printError, type StartIo } from './io.ts';
import { parseStartArgs } from './parse.ts';
import { runStart } from './run.ts';
import { probeEndpoints, unreachableMessage } from './unreachable.ts';

export type { StartIo, StopSignal } from './io.ts';

/**
 * Runs `npm start` with `argv` (the user's arguments, without `node` and the script).
 * @returns the exit code; an error that stops the run is an `error:` line on `io.stderr` (its stack
 *   trace too with `SQS_JOBS_DEBUG=1` in `io.env`).
 */
export async function runStartCli(argv: readonly string[], io: StartIo): Promise<number> {
  const request = parseStartArgs(argv, io);
  if (typeof request === 'number') return request;
  const { endpoint } = request.flags;
  let endpoints: string[];
  try {
    const resolved = resolveEndpointOptions(endpoint ? { endpointUrl: endpoint } : {}, io.env);
    endpoints = [...new Set([resolved.sqs, resolved.dynamodb].filter((u) => u !== undefined))];
  } catch (err) {
    printError(io, (err as Error).message);
    return 2;
  }
  const unreachable = await probeEndpoints(endpoints);
  if (unreachable) {
    printError(io, unreachableMessage([unreachable.url], unreachable.code));
    return 2;
  }
  return runStart(io, request, endpoints);
}
