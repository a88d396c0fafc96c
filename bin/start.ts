/**
 * `npm start`: the deployed stack running locally on embedded emulators, a sample workload with
 * injected faults, and a report that checks nothing was lost, duplicated or reordered.
 *
 * `npm run soak` (`--soak`): the same run with the soak preset: 10,000 jobs by default and every
 * fault kind on at moderate rates, AWS API faults (a fault proxy in front of SQS and DynamoDB),
 * execution environments killed right after a side effect and jobs that overrun their time limit
 * included, plus a scan of the idempotency table at the end.
 *
 * `--keep-running`: after the report the stack stays up (emulators, workers, fake external API)
 * until Ctrl-C, and where everything is gets printed (lib/local/serve.ts) with `sqs-jobs` commands
 * to paste. `--console` also serves the web console for the run (from the start, so it shows the
 * run; lib/console/local.ts) and implies `--keep-running`. `--no-workload`: the stack alone, no
 * workload and no report, until Ctrl-C.
 *
 * Exit code: 0 when every invariant holds, 1 when one fails, 2 when the run could not happen or
 * could not complete (bad flags, the stack did not start, an endpoint is unreachable, the deadline
 * was reached before every job was final), 130 when Ctrl-C stopped the wait (the partial report is
 * printed first, and nothing is kept running). With `--keep-running`, Ctrl-C after the report
 * stops everything and the exit code is still the report's; with `--no-workload` it is 0.
 * These hold through `npm start` because the npm scripts `exec` node (package.json): npm runs a
 * script in `sh -c`, and a shell that stays in between (dash, Debian's `sh`) dies of the terminal's
 * SIGINT at once, so npm saw its child killed by SIGINT and exited 130 while this process was still
 * printing behind it. npm passes on the exit code of a child that exits. Node runs with
 * `--import tsx`, not the tsx CLI, whose own child process is SIGKILLed (exit 130) when it does not
 * acknowledge a relayed SIGINT within 30 ms. `npx tsx bin/start.ts` still goes through `sh -c`.
 *
 * `--json`: the report as one JSON document on stdout (progress on stderr). With
 * `--keep-running` (or `--console`) stdout is JSON Lines: the report on one line, then the
 * description of the running stack on one line (the `sqs-jobs local --json` object plus
 * `externalApi` and `console`); with `--no-workload`, only the description.
 */
import { connect } from 'node:net';
import cliProgress from 'cli-progress';
import { Command, InvalidArgumentError, Option } from 'commander';
import { DEFAULT_CONSOLE_HOST } from '../lib/cli/console.ts';
import { consoleBeside, EmfCompletions } from '../lib/console/local.ts';
import { findInChain } from '../lib/core/error-chain.ts';
import { UNREACHABLE_CODES } from '../lib/core/network-errors.ts';
import { ENDPOINT_ENV, resolveEndpointOptions } from '../lib/local/emulators.ts';
import { type BesideRuntime, type StartBeside, serveRunning } from '../lib/local/serve.ts';
import type { FaultRates } from '../lib/sample/external-service.ts';
import { SAMPLE_JOB_TIMEOUT_SECONDS } from '../lib/sample/jobs.ts';
import {
  awsFaultRatesFor,
  deliberateCounts,
  JOBS_PER_BOOKING,
  jobsOf,
  OVERRUN_DELAY_MS,
  type Preset,
  SOAK_PRESET,
  START_PRESET,
  usersFor,
} from '../lib/sample/presets.ts';
import { renderReport, unfinishedMessage } from '../lib/sample/report.ts';
import {
  demoSends,
  type LocalRunOptions,
  type LocalRunResult,
  runLocalAndKeep,
  type SampleStack,
  seedDemo,
  startSampleStack,
  type WorkloadProgress,
} from '../lib/sample/workload.ts';

/** How `--fault-rate` is split over the failing kinds (shares add up to 1). */
const FAULT_SPLIT = { timeout: 0.2, throttle: 0.35, unavailable: 0.35, badRequest: 0.1 } as const;

/** Set to 1 to print the stack of an error that stops the run. */
const DEBUG_ENV = 'SQS_JOBS_DEBUG';

/** Upper bounds of the workload size: beyond them a local run only eats memory and time. */
export const MAX_USERS = 10_000;
export const MAX_BOOKINGS_PER_USER = 20;

function integer(min: number, max?: number) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n) || n < min || (max !== undefined && n > max)) {
      throw new InvalidArgumentError(
        max === undefined
          ? `must be an integer >= ${min}`
          : `must be an integer from ${min} to ${max.toLocaleString('en-US')}`,
      );
    }
    return n;
  };
}

function endpointUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be an http(s) URL, e.g. http://localhost:5000');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidArgumentError('must be an http(s) URL, e.g. http://localhost:5000');
  }
  return value;
}

function rate(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) {
    throw new InvalidArgumentError('must be a number from 0 to 1');
  }
  return n;
}

function visibility(value: string): number | 'deployed' {
  if (value === 'deployed') return value;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 43_200) {
    throw new InvalidArgumentError('must be "deployed" or whole seconds from 1 to 43200');
  }
  return n;
}

interface StartFlags {
  readonly soak: boolean;
  readonly users: number;
  readonly jobs?: number;
  readonly bookingsPerUser: number;
  readonly seed: number;
  readonly faultRate: number;
  readonly timeoutRate?: number;
  readonly throttleRate?: number;
  readonly unavailableRate?: number;
  readonly badRequestRate?: number;
  readonly slowRate: number;
  readonly overrunRate: number;
  readonly killRate: number;
  readonly dynamodbFaultRate: number;
  readonly sqsFaultRate: number;
  readonly externalTimeoutMs: number;
  readonly lostResponseRate: number;
  readonly visibilityTimeoutSeconds: number | 'deployed';
  readonly outOfStock: number;
  readonly malformed: number;
  readonly duplicates: number;
  readonly timeoutSeconds: number;
  readonly endpoint?: string;
  readonly json: boolean;
  readonly keepRunning: boolean;
  readonly console: boolean;
  /** False with --no-workload. */
  readonly workload: boolean;
  readonly consoleHost: string;
  readonly consolePort: number;
  readonly readOnly: boolean;
}

/** Flags that only shape the workload or its report: refused with --no-workload when given. */
const WORKLOAD_FLAGS = [
  'users',
  'jobs',
  'bookingsPerUser',
  'outOfStock',
  'malformed',
  'duplicates',
  'timeoutSeconds',
  'soak',
] as const;

/** The command line of `npm start` (or, with the soak preset, of `npm run soak`). */
export function buildProgram(preset: Preset = START_PRESET): Command {
  const soak = preset.name === 'soak';
  const jobs = jobsOf(preset.users, preset.bookingsPerUser);
  return new Command()
    .name(soak ? 'npm run soak --' : 'npm start --')
    .description(
      soak
        ? `Soak: runs ~${jobs.toLocaleString('en-US')} jobs of the sqs-jobs sample stack through the local runtime with every fault kind on ` +
            '(external API faults, overruns of the job time limit, execution environments killed right after a side effect, ' +
            'DynamoDB throttling and 5xx, SQS 5xx on send / receive / delete, lost responses, producer resends, malformed messages), ' +
            'then checks that every job completed exactly once or is in the DLQ with evidence, per-user FIFO order, and that no ' +
            'idempotency record is stuck IN_PROGRESS past its lease. Exits 0 only when every invariant holds.'
        : 'Runs the sqs-jobs sample stack locally (the synthesized CloudFormation template on embedded SQS and DynamoDB ' +
            'emulators, the bundled Lambda functions in worker threads), sends a workload with injected faults, waits ' +
            'until every job is completed or dead-lettered, and prints a report. Exits 0 only when every invariant holds.',
    )
    .option('--soak', 'soak preset: the defaults of npm run soak (10,000 jobs, every fault kind on)', false)
    .option(
      '--users <n>',
      `users; each is a FIFO message group on the booking queue (at most ${MAX_USERS.toLocaleString('en-US')})`,
      integer(1, MAX_USERS),
      preset.users,
    )
    .option(
      '--jobs <n>',
      `about this many jobs: sets --users to n / (${JOBS_PER_BOOKING} x --bookings-per-user) (not with --users)`,
      integer(JOBS_PER_BOOKING),
    )
    .option(
      '--bookings-per-user <n>',
      `bookings per user, sent in order (at most ${MAX_BOOKINGS_PER_USER})`,
      integer(1, MAX_BOOKINGS_PER_USER),
      preset.bookingsPerUser,
    )
    .option('--seed <n>', 'seed of every random choice (workload, faults, lost responses)', integer(0), 1)
    .option(
      '--fault-rate <rate>',
      'share of external API calls that fail, split 20% timeout, 35% 429, 35% 503, 10% 400',
      rate,
      preset.faultRate,
    )
    .option(
      '--timeout-rate <rate>',
      'share of API calls that perform the side effect, then hang past the client timeout',
      rate,
    )
    .option('--throttle-rate <rate>', 'share of API calls answered 429 with Retry-After', rate)
    .option('--unavailable-rate <rate>', 'share of API calls answered 503', rate)
    .option(
      '--bad-request-rate <rate>',
      'share of API calls answered 400 (permanent: the job is dead-lettered)',
      rate,
    )
    .option(
      '--slow-rate <rate>',
      'share of API calls slowed down (still under the client timeout)',
      rate,
      preset.slowRate,
    )
    .option(
      '--overrun-rate <rate>',
      `share of API calls delayed ${OVERRUN_DELAY_MS} ms, past the job's ${SAMPLE_JOB_TIMEOUT_SECONDS} s time limit (needs --external-timeout-ms above that); the side effect still happens`,
      rate,
      preset.overrunRate,
    )
    .option(
      '--kill-rate <rate>',
      "share of API calls after whose side effect the caller's execution environment is killed (the batch comes back)",
      rate,
      preset.killRate,
    )
    .option(
      '--lost-response-rate <rate>',
      'share of successful Lambda invocations whose response is lost (the batch is delivered again)',
      rate,
      preset.lostResponseRate,
    )
    .option(
      '--dynamodb-fault-rate <rate>',
      'share of DynamoDB item calls of the functions that fail: 30% 400 ProvisionedThroughputExceeded, 30% 400 ThrottlingException, 10% 500, 10% 503, 20% write done then response lost (500)',
      rate,
      preset.dynamodbFaultRate,
    )
    .option(
      '--sqs-fault-rate <rate>',
      'share of SQS send / receive / delete calls (functions, pollers, producer) that fail: sends and deletes 2/3 500, 1/3 done then response lost (500); receives 503',
      rate,
      preset.sqsFaultRate,
    )
    .option(
      '--external-timeout-ms <n>',
      "timeout of the functions' external API calls (EXTERNAL_API_TIMEOUT_MS), in ms",
      integer(100, 60_000),
      preset.externalTimeoutMs,
    )
    .option(
      '--visibility-timeout-seconds <n>',
      'visibility timeout of the main queues for this run, so lost responses come back in time; "deployed" keeps the template value (6 x function timeout)',
      visibility,
      15,
    )
    .option(
      '--out-of-stock <n>',
      'bookings of a sold-out SKU (dead-lettered at once, never retried)',
      integer(0),
      preset.outOfStock,
    )
    .option(
      '--malformed <n>',
      'malformed messages (bad JSON, schema failure, unknown job type)',
      integer(0),
      preset.malformed,
    )
    .option(
      '--duplicates <n>',
      'payment jobs sent twice with the same id (a producer retrying)',
      integer(0),
      preset.duplicates,
    )
    .option(
      '--timeout-seconds <n>',
      'deadline for every job to be completed or dead-lettered; when reached first, the run exits 2 (not finished)',
      integer(1),
      preset.timeoutSeconds,
    )
    .addOption(
      new Option(
        '--endpoint <url>',
        `one SQS + DynamoDB endpoint (moto server, LocalStack...) instead of the embedded emulators; per service: env ${ENDPOINT_ENV.sqs}, ${ENDPOINT_ENV.dynamodb}`,
      )
        .env(ENDPOINT_ENV.shared)
        .argParser(endpointUrl),
    )
    .option(
      '--json',
      'print the report as JSON on stdout (progress goes to stderr); with --keep-running, JSON Lines: the report, then where everything is',
      false,
    )
    .option(
      '--keep-running',
      'after the report, keep the stack (emulators, workers, fake external API) up until Ctrl-C and print its endpoints, queue and DLQ URLs, tables and sqs-jobs commands to paste',
      false,
    )
    .option(
      '--console',
      'serve the web console for this run (its URL, with an access token, is printed as soon as the stack is up); implies --keep-running',
      false,
    )
    .option(
      '--no-workload',
      'start the sample stack and keep it up until Ctrl-C, with no workload and no report (what sqs-jobs local does for your own app)',
    )
    .option('--console-host <address>', 'address the console listens on', DEFAULT_CONSOLE_HOST)
    .option('--console-port <n>', 'port of the console (0: any free port)', integer(0, 65_535), 0)
    .option('--read-only', 'console without redrive', false)
    .addHelpText(
      'after',
      soak
        ? `
Examples:
  npm run soak                                 10,000 jobs (500 users x 4 bookings x 5 jobs), every fault kind on
  npm run soak -- --jobs 1000                  a 1,000-job soak (users scaled)
  npm run soak -- --jobs 1000 --endpoint http://localhost:5000   on moto server

Environment:
  ${ENDPOINT_ENV.shared}, ${ENDPOINT_ENV.sqs}, ${ENDPOINT_ENV.dynamodb}   endpoints (see --endpoint)
  SQS_JOBS_FUNCTION_LOGS=1   print the Lambda functions' logs on stderr
  ${DEBUG_ENV}=1            print the stack trace of an error that stops the run

Exit code: 0 all invariants hold, 1 an invariant failed, 2 the run could not happen or did not
finish before --timeout-seconds. --keep-running, --console and --json work as with npm start
(npm start -- --help).`
        : `
Examples:
  npm start                                   default run: 100 users x 3 bookings, 5% API faults
  npm start -- --users 10 --fault-rate 0      small run without API faults
  npm start -- --fault-rate 0.2 --seed 7      more faults, another seed
  npm start -- --endpoint http://localhost:5000   against moto server (or env ${ENDPOINT_ENV.shared})
  npm run soak                                the soak: 10,000 jobs, every fault kind on (same flags)
  npm start -- --keep-running                 after the report, keep everything up until Ctrl-C: queue and DLQ URLs,
                                              commands to paste (sqs-jobs stats, dlq list, send)
  npm start -- --console                      the same, with the web console (open the printed URL during the run)
  npm start -- --no-workload --console        the sample stack and the console, no workload: send jobs yourself

Keep running: the report's DLQ read leaves every dead letter in its DLQ, visible (a FIFO DLQ is
read through by copying each message behind its group, then deleting the original: new MessageIds),
so sqs-jobs dlq list and the console see the run's dead letters. The printed send commands run jobs
of a demo booking (demo-user / demo-booking-1) that complete. Ctrl-C stops everything.

Environment:
  ${ENDPOINT_ENV.shared}, ${ENDPOINT_ENV.sqs}, ${ENDPOINT_ENV.dynamodb}   endpoints (see --endpoint)
  SQS_JOBS_FUNCTION_LOGS=1   print the Lambda functions' logs on stderr
  ${DEBUG_ENV}=1            print the stack trace of an error that stops the run

Exit code: 0 all invariants hold, 1 an invariant failed, 2 the run could not happen or did not
finish before --timeout-seconds, 130 Ctrl-C during the run (partial report, nothing kept running).
With --keep-running / --console: the report's code, after Ctrl-C has stopped everything;
--no-workload: 0.
--json with --keep-running / --console prints JSON Lines: the report, then where everything is
(the object of sqs-jobs local --json, plus externalApi and console); --no-workload: only the latter.`,
    );
}

/**
 * Refuses fault rates that add up to more than 1, naming each rate summed and where it came from
 * (its own flag, or its share of --fault-rate; --slow-rate and its default count too).
 */
export function checkFaultRates(flags: StartFlags, faults: FaultRates): void {
  const sum = Object.values(faults).reduce((a, b) => a + b, 0);
  if (sum <= 1 + 1e-9) return;
  const fmt = (n: number) => String(Number(n.toFixed(4)));
  const share = (own: number | undefined, flag: string, split: number) =>
    own !== undefined
      ? `${flag} ${fmt(own)}`
      : `${fmt(flags.faultRate * split)} (${split * 100}% of --fault-rate ${fmt(flags.faultRate)})`;
  const parts = [
    `timeout ${share(flags.timeoutRate, '--timeout-rate', FAULT_SPLIT.timeout)}`,
    `429 ${share(flags.throttleRate, '--throttle-rate', FAULT_SPLIT.throttle)}`,
    `503 ${share(flags.unavailableRate, '--unavailable-rate', FAULT_SPLIT.unavailable)}`,
    `400 ${share(flags.badRequestRate, '--bad-request-rate', FAULT_SPLIT.badRequest)}`,
    `slow --slow-rate ${fmt(flags.slowRate)}`,
    ...(flags.overrunRate > 0 ? [`overrun --overrun-rate ${fmt(flags.overrunRate)}`] : []),
    ...(flags.killRate > 0 ? [`kill --kill-rate ${fmt(flags.killRate)}`] : []),
  ];
  throw new Error(
    `the fault rates add up to ${fmt(sum)}, more than 1: ${parts.join(' + ')}. ` +
      'Lower them; a rate not given on the command line is its share of --fault-rate (default 0.05), and --slow-rate defaults to 0.03.',
  );
}

/**
 * Checks the flags that depend on each other: --jobs and --users exclude each other; an overrun
 * must outlast the job's time limit under the client timeout.
 */
export function checkCombinations(
  flags: StartFlags,
  usersGiven: boolean,
  given: (flag: (typeof WORKLOAD_FLAGS)[number]) => boolean = () => false,
): void {
  if (!flags.workload) {
    const workloadFlags = WORKLOAD_FLAGS.filter(given);
    if (workloadFlags.length > 0) {
      const names = workloadFlags.map((f) => `--${f.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
      throw new Error(
        `--no-workload runs no workload: ${names.join(', ')} ${names.length === 1 ? 'has' : 'have'} nothing to do (the fault flags still set the fake external API)`,
      );
    }
  }
  if (flags.jobs !== undefined && usersGiven) {
    throw new Error('--jobs sets --users: give one of them, not both');
  }
  if (flags.overrunRate > 0 && flags.externalTimeoutMs <= OVERRUN_DELAY_MS) {
    throw new Error(
      `--overrun-rate needs --external-timeout-ms above ${OVERRUN_DELAY_MS} (got ${flags.externalTimeoutMs}): ` +
        "otherwise the client's timeout ends the call before the job's time limit",
    );
  }
}

function faultRates(flags: StartFlags): FaultRates {
  return {
    timeout: flags.timeoutRate ?? flags.faultRate * FAULT_SPLIT.timeout,
    throttle: flags.throttleRate ?? flags.faultRate * FAULT_SPLIT.throttle,
    unavailable: flags.unavailableRate ?? flags.faultRate * FAULT_SPLIT.unavailable,
    badRequest: flags.badRequestRate ?? flags.faultRate * FAULT_SPLIT.badRequest,
    slow: flags.slowRate,
    overrun: flags.overrunRate,
    kill: flags.killRate,
  };
}

/** The unreachable-endpoint code (core/network-errors.ts) anywhere in an error's cause chain (or an AggregateError's errors). */
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
async function probeEndpoints(
  endpoints: readonly string[],
): Promise<{ url: string; code: string } | undefined> {
  for (const url of endpoints) {
    const { hostname, port, protocol } = new URL(url);
    const code = await new Promise<string | undefined>((resolve) => {
      const socket = connect({
        host: hostname.replace(/^\[|\]$/g, ''),
        port: Number(port || (protocol === 'https:' ? 443 : 80)),
      });
      socket.setTimeout(5_000, () => {
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

/** Prints an error that stops the run: one line, the stack only with SQS_JOBS_DEBUG=1. */
function printError(message: string, err?: unknown): void {
  process.stderr.write(`error: ${message}\n`);
  if (err !== undefined && process.env[DEBUG_ENV] === '1') {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  } else if (err !== undefined) {
    process.stderr.write(`(set ${DEBUG_ENV}=1 for the stack trace)\n`);
  }
}

/** Progress on a terminal (a bar) or as plain lines (one per phase and every few seconds). */
function progressReporter(out: NodeJS.WriteStream, useBar: boolean) {
  let bar: cliProgress.SingleBar | undefined;
  let lastLine = 0;
  let lastPhase = '';
  const line = (p: WorkloadProgress) =>
    `${(p.elapsedMs / 1000).toFixed(0).padStart(4)} s  ${p.phase.padEnd(10)} sent ${p.sent}, completed ${p.completed}, dead-lettered ${p.deadLettered} of ~${p.total} jobs, ${p.inQueues} in queues`;
  return {
    step(message: string) {
      if (bar) return;
      out.write(`- ${message}\n`);
    },
    update(p: WorkloadProgress) {
      if (useBar && p.phase === 'running') {
        const payload = { completed: p.completed, dlq: p.deadLettered, inQueues: p.inQueues };
        const total = Math.max(p.total, p.completed + p.deadLettered, 1);
        if (!bar) {
          bar = new cliProgress.SingleBar(
            {
              format:
                'jobs {bar} {value}/{total} | completed {completed} | dead-lettered {dlq} | in queues {inQueues} | {duration}s',
              stream: out,
              hideCursor: true,
            },
            cliProgress.Presets.shades_classic,
          );
          bar.start(total, 0, payload);
        }
        bar.setTotal(total);
        bar.update(p.completed + p.deadLettered, payload);
        return;
      }
      if (bar && p.phase !== 'running') {
        bar.stop();
        bar = undefined;
      }
      const now = Date.now();
      if (p.phase !== lastPhase || now - lastLine >= 5_000) {
        out.write(`${line(p)}\n`);
        lastLine = now;
        lastPhase = p.phase;
      }
    },
    stop() {
      bar?.stop();
      bar = undefined;
    },
  };
}

/** Runs `npm start` with `argv` (as `process.argv`); resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  // The preset decides the defaults, so it is read before the flags are parsed.
  const preset = argv.slice(2).includes('--soak') ? SOAK_PRESET : START_PRESET;
  const program = buildProgram(preset);
  program.exitOverride();
  try {
    program.parse([...argv]);
  } catch (err) {
    const code = (err as { exitCode?: number }).exitCode;
    return code === 0 ? 0 : 2;
  }
  const flags = program.opts<StartFlags>();
  let faults: FaultRates;
  try {
    faults = faultRates(flags);
    checkFaultRates(flags, faults);
    checkCombinations(
      flags,
      program.getOptionValueSource('users') === 'cli',
      (flag) => program.getOptionValueSource(flag) === 'cli',
    );
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    return 2;
  }
  let endpoints: string[];
  try {
    const resolved = resolveEndpointOptions(flags.endpoint ? { endpointUrl: flags.endpoint } : {});
    endpoints = [...new Set([resolved.sqs, resolved.dynamodb].filter((u) => u !== undefined))];
  } catch (err) {
    printError((err as Error).message);
    return 2;
  }
  const unreachable = await probeEndpoints(endpoints);
  if (unreachable) {
    printError(unreachableMessage([unreachable.url], unreachable.code));
    return 2;
  }
  const progressOut = flags.json ? process.stderr : process.stdout;
  const progress = progressReporter(progressOut, !flags.json && process.stdout.isTTY === true);
  const keepRunning = flags.keepRunning || flags.console || !flags.workload;
  // The console counts completions from the workers' own metric, read from their logs.
  const emf = flags.console ? new EmfCompletions() : undefined;
  const startConsole: StartBeside | undefined = flags.console
    ? consoleBeside({ emf, host: flags.consoleHost, port: flags.consolePort, readOnly: flags.readOnly })
    : undefined;
  const awsFaults = awsFaultRatesFor(flags.dynamodbFaultRate, flags.sqsFaultRate);
  const stackOptions = {
    seed: flags.seed,
    faults,
    ...(awsFaults ? { awsFaults } : {}),
    externalTimeoutMs: flags.externalTimeoutMs,
    lostResponseRate: flags.lostResponseRate,
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
  } satisfies LocalRunOptions;

  const failed = (err: unknown): number => {
    progress.stop();
    const code = endpoints.length > 0 ? unreachableCode(err) : undefined;
    if (code) printError(unreachableMessage(endpoints, code), err);
    else printError(`the local run failed: ${(err as Error).message}`, err);
    return 2;
  };

  if (!flags.workload) {
    let stack: SampleStack;
    try {
      stack = await startSampleStack(stackOptions);
    } catch (err) {
      return failed(err);
    }
    progress.stop();
    return serveStack(stack, 0, flags, startConsole === undefined ? [] : [startConsole]);
  }

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
      (count) => program.getOptionValueSource(count) === 'cli',
    );
    // Ctrl-C: stop waiting for the jobs, collect and print the partial report, exit 130 (a
    // second Ctrl-C quits at once). The stack is stopped in order either way.
    const interrupt = new AbortController();
    const stopListening = onStopSignals(
      ['SIGINT'],
      () => {
        process.stderr.write('\ninterrupted: collecting a partial report (Ctrl-C again to quit at once)…\n');
        interrupt.abort();
      },
      () => process.exit(130),
    );
    try {
      ({ result, stack } = await runLocalAndKeep({
        ...stackOptions,
        signal: interrupt.signal,
        users,
        bookingsPerUser: flags.bookingsPerUser,
        outOfStock: counts.outOfStock,
        malformed: counts.malformed,
        producerDuplicates: counts.duplicates,
        timeoutSeconds: flags.timeoutSeconds,
        onProgress: (p) => progress.update(p),
        ...(startConsole === undefined
          ? {}
          : {
              onStackStarted: async (started) => {
                runConsole = await startConsole(started.runtime);
                progress.stop();
                (flags.json ? process.stderr : process.stdout).write(
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
    return failed(err);
  }
  progress.stop();
  if (!keepRunning || result.workload.interrupted) progress.step('stopping');
  const code = printReport(result, flags, faults, keepRunning);
  if (!keepRunning || result.workload.interrupted) {
    await runConsole?.close?.();
    await stack.stop();
    return code;
  }
  const kept = runConsole;
  return serveStack(stack, code, flags, kept === undefined ? [] : [async () => kept]);
}

/**
 * Prints the report (text, or JSON: pretty, or one line when the stack keeps running and a
 * description follows) and what the exit code means.
 * @returns the report's exit code.
 */
function printReport(
  result: LocalRunResult,
  flags: StartFlags,
  faults: FaultRates,
  oneLine: boolean,
): number {
  if (flags.json) {
    const { report, notes, metrics, runtime, awsFaults } = result;
    const document = {
      report,
      notes,
      workerMetrics: metrics,
      invocations: runtime.totals,
      faultRates: faults,
      ...(awsFaults
        ? { awsFaultRates: awsFaultRatesFor(flags.dynamodbFaultRate, flags.sqsFaultRate), awsFaults }
        : {}),
    };
    process.stdout.write(`${oneLine ? JSON.stringify(document) : JSON.stringify(document, null, 2)}\n`);
  } else {
    process.stdout.write('\n');
    for (const note of result.notes) process.stdout.write(`note: ${note}\n`);
    process.stdout.write(`\n${renderReport(result.report, { timeoutSeconds: flags.timeoutSeconds })}`);
  }
  // A checked invariant that fails is a real failure even in an unfinished run; otherwise a run
  // that hit the deadline could not complete (exit 2), with what to do about it.
  if (result.report.failed) return 1;
  if (result.workload.interrupted) {
    process.stderr.write(
      'interrupted: the report above is partial (jobs still queued or in flight are counted as not finished, not lost)\n',
    );
    return 130;
  }
  const unfinished = unfinishedMessage(result.report, flags.timeoutSeconds);
  if (unfinished !== undefined) {
    if (flags.json) process.stderr.write(`error: ${unfinished}\n`);
    return 2;
  }
  return result.report.ok ? 0 : 1;
}

/**
 * A second stop signal this soon after the first is the same Ctrl-C: a terminal sends SIGINT to
 * the whole process group, and a wrapper in it (npm) relays its own copy to this process.
 */
const SAME_KEYPRESS_MS = 1_000;

/**
 * Calls `first` at the first of `signals`, `again` at a later one (not within
 * {@link SAME_KEYPRESS_MS} of the first), until the returned function removes the listeners.
 */
function onStopSignals(signals: readonly NodeJS.Signals[], first: () => void, again: () => void): () => void {
  let firstAtMs: number | undefined;
  const listener = () => {
    const now = Date.now();
    if (firstAtMs === undefined) {
      firstAtMs = now;
      first();
    } else if (now - firstAtMs >= SAME_KEYPRESS_MS) again();
  };
  for (const signal of signals) process.on(signal, listener);
  return () => {
    for (const signal of signals) process.off(signal, listener);
  };
}

/**
 * Keeps the sample stack up until Ctrl-C (or SIGTERM): seeds the demo booking the printed `send`
 * commands use, prints where everything is (lib/local/serve.ts) with the fake external API and what
 * else runs beside the stack (the console), then stops all of it.
 * @returns `exitCode` (the report's), or 2 when serving could not start.
 */
async function serveStack(
  stack: SampleStack,
  exitCode: number,
  flags: StartFlags,
  beside: readonly StartBeside[],
): Promise<number> {
  const stop = new AbortController();
  const stopListening = onStopSignals(
    ['SIGINT', 'SIGTERM'],
    () => {
      process.stderr.write(
        `\nstopping: ${beside.length > 0 ? 'the console, ' : ''}the workers, the fake external API and the emulators (Ctrl-C again to quit at once)…\n`,
      );
      stop.abort();
    },
    () => process.exit(exitCode),
  );
  let code = exitCode;
  try {
    await seedDemo(stack.repository);
    // Text: a blank line between the report and the description.
    if (!flags.json && flags.workload) process.stdout.write('\n');
    const externalApi: StartBeside = async () => ({
      json: { externalApi: { url: stack.service.url } },
      text: [
        `Fake external API  ${stack.service.url}  (the sample's payment, mail and invoice service: EXTERNAL_API_URL of the workers)`,
      ],
    });
    await serveRunning(stack.runtime, {
      json: flags.json,
      stdout: process.stdout,
      signal: stop.signal,
      beside: [externalApi, ...beside],
      render: {
        cli: 'npm run sqs-jobs --',
        send: demoSends(stack.target),
        stopLine: flags.workload
          ? `Ctrl-C stops everything; the exit code is then the report's (${exitCode}).`
          : 'Ctrl-C stops everything.',
      },
    });
  } catch (err) {
    printError(`could not keep the stack running: ${(err as Error).message}`, err);
    code = 2;
  } finally {
    await stack.stop();
    stopListening();
  }
  process.stderr.write('stopped\n');
  return code;
}

process.exitCode = await main(process.argv);
