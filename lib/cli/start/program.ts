/**
 * The command line of `npm start` (or, with the soak preset, of `npm run soak`): every flag with
 * its parser, description and the preset's default, and the help text (./help.ts). Parsing only:
 * what the flags mean together is in ./checks.ts, the run in ./run.ts.
 */
import { Command, Option } from 'commander';
import { ENDPOINT_ENV } from '../../local/emulators.ts';
import { SAMPLE_JOB_TIMEOUT_SECONDS } from '../../sample/jobs.ts';
import { JOBS_PER_BOOKING, jobsOf, OVERRUN_DELAY_MS, type Preset } from '../../sample/presets.ts';
import { DEFAULT_CONSOLE_HOST } from '../console.ts';
import {
  endpointUrl,
  integer,
  MAX_BATCHES,
  MAX_BOOKINGS_PER_USER,
  MAX_USERS,
  perSecond,
  rate,
  visibility,
} from './flags.ts';
import { helpAfter } from './help.ts';
import type { StartIo } from './io.ts';

/** Where the program writes its help (stdout) and its refusals (stderr). */
export type ProgramOutput = Pick<StartIo, 'stdout' | 'stderr'>;

/**
 * The command line of `npm start` (or, with the soak preset, of `npm run soak`), the preset's
 * values as defaults. It throws instead of exiting (`exitOverride`): a `CommanderError` whose
 * `exitCode` is 0 after --help, else 1 after the refusal is written to `output.stderr`.
 */
export function buildProgram(preset: Preset, output: ProgramOutput): Command {
  const soak = preset.name === 'soak';
  const jobs = jobsOf(preset.users, preset.bookingsPerUser);
  return new Command()
    .name(soak ? 'npm run soak --' : 'npm start --')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => output.stdout.write(text),
      writeErr: (text) => output.stderr.write(text),
    })
    .description(
      soak
        ? `Soak: runs ~${jobs.toLocaleString('en-US')} jobs of the sqs-jobs sample stack through the local runtime with every fault kind on ` +
            '(external API faults, overruns of the job time limit, execution environments killed right after a side effect, ' +
            'DynamoDB throttling and 5xx, SQS 5xx on send / receive / delete, lost responses, producer resends, malformed messages, ' +
            'EventBridge Scheduler firings delivered twice), with reservation holds sent for later and the nightly invoice run fired now, ' +
            'then checks that every job completed exactly once or is in the DLQ with evidence, per-user FIFO order, and that no ' +
            'idempotency record is stuck IN_PROGRESS past its lease. Exits 0 only when every invariant holds.'
        : 'Runs the sqs-jobs sample stack locally (the synthesized CloudFormation template on embedded SQS and DynamoDB ' +
            'emulators, the bundled Lambda functions in worker threads), sends a workload with injected faults, waits ' +
            'until every job is completed or dead-lettered (reservation holds sent for later, half cancelled; the nightly invoice ' +
            'schedule fired now and delivered twice), and prints a report. Exits 0 only when every invariant holds.',
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
      '--partner-rate-limit <per-second>',
      `a rate limit per tenant (user) on the fake partner API, requests per second (burst: the same, rounded up); above it the API answers 429 with Retry-After, retried by the jobs; the report counts them (default: ${preset.partnerRateLimit === undefined ? 'no limit' : `${preset.partnerRateLimit}`})`,
      perSecond,
      preset.partnerRateLimit,
    )
    .option('--no-partner-rate-limit', 'the fake partner API without a rate limit')
    .option(
      '--no-limits',
      "the same workload without the sample's own rate limit on the partner API (lib/sample/partner-limit.ts), to compare the partner's 429s with and without it",
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
    .option(
      '--holds <n>',
      'bookings that get a reservation hold: its expiry job is sent for later (alternately a one-time schedule on the FIFO queue and DelaySeconds on a standard one), half are confirmed at once (the job cancelled)',
      integer(0),
      preset.holds,
    )
    .option(
      '--batches <n>',
      'small batches sent besides the workload, each with a completion job (some with a child dead-lettered on purpose, some nested); the report checks each completed and its completion job ran once',
      integer(0, MAX_BATCHES),
      0,
    )
    .option(
      '--hold-delay-ms <n>',
      'how long a hold lasts before its expiry job runs, in ms',
      integer(0, 900_000),
      preset.holdDelayMs,
    )
    .option(
      '--nightly-backlog <n>',
      'bookings confirmed over the grace period ago and never invoiced; the run fires the nightly invoice schedule now, delivered twice (0: not fired)',
      integer(0),
      preset.nightlyBacklog,
    )
    .option(
      '--scheduler-duplicate-rate <rate>',
      "share of the local EventBridge Scheduler's firings delivered twice",
      rate,
      preset.schedulerDuplicateDeliveryRate,
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
    .addHelpText('after', helpAfter(soak));
}
