/**
 * The run `npm start` asked for: the sample stack started with the flags' faults, the console
 * beside it when asked, then either the workload (lib/sample/workload.ts) and its report, or
 * (--no-workload) nothing; then the stack stopped, or kept up until Ctrl-C (./keep-running.ts).
 * Ctrl-C during the workload stops the wait and prints a partial report (exit 130).
 */
import { consoleBeside, EmfCompletions } from '../../console/local.ts';
import type { BesideRuntime, StartBeside } from '../../local/serve.ts';
import { awsFaultRatesFor, deliberateCounts, usersFor } from '../../sample/presets.ts';
import {
  type LocalRunOptions,
  type LocalRunResult,
  runLocalAndKeep,
  type SampleStack,
  startSampleStack,
} from '../../sample/workload.ts';
import { MAX_USERS } from './flags.ts';
import { printError, type StartIo } from './io.ts';
import { keepRunning } from './keep-running.ts';
import type { StartRequest } from './parse.ts';
import { type ProgressReporter, progressReporter } from './progress.ts';
import { printReport } from './report.ts';
import { onStopSignals } from './signals.ts';
import { unreachableCode, unreachableMessage } from './unreachable.ts';

/** What a run shares between its steps. */
interface Run {
  readonly io: StartIo;
  readonly request: StartRequest;
  readonly progress: ProgressReporter;
  /** The console's starter (--console), else undefined. */
  readonly startConsole: StartBeside | undefined;
  /** Options of the sample stack, from the flags. */
  readonly stackOptions: LocalRunOptions;
  /** Prints why the run failed (an unreachable endpoint in one line) and returns 2. */
  readonly failed: (err: unknown) => number;
}

/**
 * Runs the sample as `request` says, against `endpoints` (the external ones; none: embedded
 * emulators).
 * @returns the exit code (see ./index.ts).
 */
export async function runStart(
  io: StartIo,
  request: StartRequest,
  endpoints: readonly string[],
): Promise<number> {
  const { flags, faults } = request;
  const progress = progressReporter(
    flags.json ? io.stderr : io.stdout,
    !flags.json && io.stdout.isTTY === true,
  );
  // The console counts completions from the workers' own metric, read from their logs.
  const emf = flags.console ? new EmfCompletions() : undefined;
  const awsFaults = awsFaultRatesFor(flags.dynamodbFaultRate, flags.sqsFaultRate);
  const run: Run = {
    io,
    request,
    progress,
    startConsole: flags.console
      ? consoleBeside({ emf, host: flags.consoleHost, port: flags.consolePort, readOnly: flags.readOnly })
      : undefined,
    stackOptions: {
      seed: flags.seed,
      faults,
      ...(awsFaults ? { awsFaults } : {}),
      externalTimeoutMs: flags.externalTimeoutMs,
      ...(flags.partnerRateLimit === undefined || flags.partnerRateLimit === false
        ? {}
        : { externalService: { tenantRateLimit: { requestsPerSecond: flags.partnerRateLimit } } }),
      sampleRateLimits: flags.limits,
      lostResponseRate: flags.lostResponseRate,
      schedulerDuplicateDeliveryRate: flags.schedulerDuplicateRate,
      // Reservation holds and the nightly run fired now (lib/sample/workload/scheduled.ts).
      holds: flags.holds,
      holdDelayMs: flags.holdDelayMs,
      nightlyBacklog: flags.nightlyBacklog,
      ...(flags.visibilityTimeoutSeconds === 'deployed'
        ? {}
        : { visibilityTimeoutSeconds: flags.visibilityTimeoutSeconds }),
      ...(flags.endpoint ? { endpointUrl: flags.endpoint } : {}),
      onStep: (message: string) => progress.step(message),
      ...(emf === undefined
        ? {}
        : {
            onFunctionLog: (line: { stream: string; line: string }) => {
              if (line.stream === 'stdout') emf.add(line.line);
            },
          }),
    },
    failed: (err) => {
      progress.stop();
      const code = endpoints.length > 0 ? unreachableCode(err) : undefined;
      if (code) printError(io, unreachableMessage(endpoints, code), err);
      else printError(io, `the local run failed: ${(err as Error).message}`, err);
      return 2;
    },
  };
  return flags.workload ? runWorkload(run) : runStackOnly(run);
}

/** --no-workload: the stack (and the console) until Ctrl-C; exit code 0. */
async function runStackOnly(run: Run): Promise<number> {
  let stack: SampleStack;
  try {
    stack = await startSampleStack(run.stackOptions);
  } catch (err) {
    return run.failed(err);
  }
  run.progress.stop();
  return keepRunning(
    run.io,
    stack,
    0,
    run.request.flags,
    run.startConsole === undefined ? [] : [run.startConsole],
  );
}

/** The workload, its report, then the stack stopped or kept up until Ctrl-C. */
async function runWorkload(run: Run): Promise<number> {
  const { io, request, progress, startConsole } = run;
  const { flags, preset } = request;
  const keep = flags.keepRunning || flags.console;
  let result: LocalRunResult;
  let stack: SampleStack;
  /** The console, started as soon as the stack is up, so it shows the run. */
  let runConsole: BesideRuntime | undefined;
  try {
    const users = usersFor(flags, MAX_USERS);
    const counts = deliberateCounts(
      { outOfStock: flags.outOfStock, malformed: flags.malformed, duplicates: flags.duplicates },
      { users, bookingsPerUser: flags.bookingsPerUser },
      preset,
      request.given,
    );
    // Ctrl-C: stop waiting for the jobs, collect and print the partial report, exit 130 (a
    // second Ctrl-C quits at once). The stack is stopped in order either way.
    const interrupt = new AbortController();
    const stopListening = onStopSignals(
      io,
      ['SIGINT'],
      () => {
        io.stderr.write('\ninterrupted: collecting a partial report (Ctrl-C again to quit at once)…\n');
        interrupt.abort();
      },
      () => io.exit(130),
    );
    try {
      ({ result, stack } = await runLocalAndKeep({
        ...run.stackOptions,
        signal: interrupt.signal,
        users,
        bookingsPerUser: flags.bookingsPerUser,
        outOfStock: counts.outOfStock,
        malformed: counts.malformed,
        producerDuplicates: counts.duplicates,
        batches: flags.batches,
        timeoutSeconds: flags.timeoutSeconds,
        onProgress: (p) => progress.update(p),
        ...(startConsole === undefined
          ? {}
          : {
              onStackStarted: async (started) => {
                runConsole = await startConsole(started.runtime);
                progress.stop();
                (flags.json ? io.stderr : io.stdout).write(
                  `${runConsole.text.join('\n')}\n  (open it now to watch the run; it stays up after the report until Ctrl-C)\n`,
                );
              },
            }),
      }));
    } finally {
      stopListening();
    }
  } catch (err) {
    await runConsole?.close?.();
    return run.failed(err);
  }
  progress.stop();
  const stopNow = !keep || result.workload.interrupted;
  if (stopNow) progress.step('stopping');
  const code = printReport(io, result, flags, request.faults, keep);
  if (stopNow) {
    await runConsole?.close?.();
    await stack.stop();
    return code;
  }
  const kept = runConsole;
  return keepRunning(io, stack, code, flags, kept === undefined ? [] : [async () => kept]);
}
