/**
 * `sqs-jobs local`: the user's own CDK app running on this machine with no workload, until
 * Ctrl-C (lib/local/serve.ts). Queues, DLQs and tables of the synthesized template are created on
 * embedded emulators (fauxqs, dynalite: the project installs them as devDependencies) or on an
 * external endpoint (moto server, LocalStack), and each worker's bundled code runs behind an
 * emulated event source mapping.
 */
import { join } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { consoleBeside, EmfCompletions } from '../console/local.ts';
import { ENDPOINT_ENV } from '../local/emulators.ts';
import { LocalRuntimeError } from '../local/errors.ts';
import { formatJobLine, jobEventOf } from '../local/job-lines.ts';
import { serveLocal } from '../local/serve.ts';
import { watchBeside } from '../local/watch.ts';
import { type CommandRunner, integer } from './common.ts';
import { DEFAULT_CONSOLE_HOST } from './console.ts';
import { CLI_EXIT } from './io.ts';

/** Port of the local SQS endpoint unless --sqs-port says otherwise (ElasticMQ's, which local SQS tools default to). */
export const DEFAULT_SQS_PORT = 9324;
/** Port of the local DynamoDB endpoint (the embedded dynalite) unless --dynamodb-port says otherwise (DynamoDB Local's). */
export const DEFAULT_DYNAMODB_PORT = 8000;
/** Port of the local EventBridge Scheduler endpoint unless --scheduler-port says otherwise (next to the SQS one). */
export const DEFAULT_SCHEDULER_PORT = 9325;

interface LocalFlags {
  readonly projectRoot: string;
  readonly assembly?: string;
  readonly stack?: string;
  readonly synth: 'auto' | 'always' | 'never';
  readonly endpoint?: string;
  readonly region?: string;
  readonly functionLogs: boolean;
  readonly quiet: boolean;
  readonly watch: boolean;
  readonly json: boolean;
  readonly sqsPort: number;
  readonly dynamodbPort: number;
  readonly schedulerPort: number;
  readonly console: boolean;
  readonly consoleHost: string;
  readonly consolePort: number;
  readonly readOnly: boolean;
}

const HELP_AFTER = `
Needs, in your project: npm install --save-dev fauxqs dynalite (the embedded SQS and DynamoDB
emulators; not needed with --endpoint), and Node >= 22.15 (the functions' module loader hooks;
on an older system Node: npm install --save-dev node@24, then npx runs the CLI on it).
Synthesis: --synth auto runs \`npx cdk synth\` in --project-root when cdk.out is missing or older
than bin/, lib/, functions/, package-lock.json or cdk.json; use --synth always after other changes.

Prints the endpoints, every queue with its dead-letter queue, the tables, and commands to paste
into another terminal (stats, dlq list, send). Local differences from AWS are printed as notes
(e.g. DynamoDB TTL does not run).

Then one line per job as the workers run it: time, outcome (completed, retry, dead-lettered,
duplicate, deferred), type, id, attempt, duration, and why for a retry or a dead letter.
--json prints each as a JSON object ({"kind":"job",...}) after the description; --quiet prints
none. The functions get JOBS_LOG_EACH_RECORD=true for it (their completion lines).

Ports: the local SQS, DynamoDB and EventBridge Scheduler endpoints listen on fixed ports,
${DEFAULT_SQS_PORT}, ${DEFAULT_DYNAMODB_PORT} and ${DEFAULT_SCHEDULER_PORT}, so endpoints and queue URLs stay the same from one
start to the next; --sqs-port / --dynamodb-port / --scheduler-port change them (0: any free
port). A port in use is an error naming it. Everything listens on 127.0.0.1 only. The data is
not kept: each start begins with empty queues, DLQs and tables (with --endpoint too: the
stack's queues and tables are created anew).

Watch: --watch rebuilds on a change to what cdk.json's watch.include names (else the project):
it synthesizes (when cdk.out is stale) and reloads each function whose code changed; in-flight
jobs finish on the old code, queued ones run on the new. Prints "reloaded <functions>" (with
--json: {"kind":"reload",...}); a failed synth is printed and the old code keeps running.

Console: --console also serves the web console (queues, dead letters, jobs; see sqs-jobs console
--help) for this stack and prints its URL, which carries this start's access token.

Examples:
  npx sqs-jobs local
  npx sqs-jobs local --console
  npx sqs-jobs local --project-root infra --stack Jobs --function-logs
  npx sqs-jobs local --endpoint http://localhost:5000 --json

Exit codes: 0 stopped with Ctrl-C, 2 could not start (missing emulators, synthesis, template).
See docs/own-app.md.`;

/** Node's synchronous module hooks (`module.registerHooks`), which the function threads use: Node 22.15+ / 23.5+. */
async function hasModuleHooks(): Promise<boolean> {
  const moduleApi = (await import('node:module')) as { registerHooks?: unknown };
  return typeof moduleApi.registerHooks === 'function';
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/** Adds `local` to `program`. */
export function addLocalCommand(program: Command, runner: CommandRunner): void {
  program
    .command('local')
    .description(
      "Run your CDK app's stack locally (queues, dead-letter queues, tables and workers on embedded " +
        'emulators) until Ctrl-C, and print where everything is.',
    )
    .option('--project-root <dir>', 'the CDK app (cdk.json, package.json, node_modules)', '.')
    .option('--assembly <dir>', 'cloud assembly directory (default: <project-root>/cdk.out)')
    .option('--stack <name>', 'stack name or artifact id, when the assembly holds several')
    .option(
      '--synth <when>',
      'auto | always | never',
      (value) => {
        if (value !== 'auto' && value !== 'always' && value !== 'never') {
          throw new InvalidArgumentError('must be auto, always or never');
        }
        return value;
      },
      'auto',
    )
    .option(
      '--endpoint <url>',
      `an SQS + DynamoDB endpoint to use instead of the embedded emulators (default: ${ENDPOINT_ENV.shared})`,
    )
    .option('--region <region>', 'region of the local stack (default: the stack region, else us-east-1)')
    .option('--function-logs', "print the workers' logs on stderr", false)
    .option('--quiet', 'print no line per job', false)
    .option(
      '--watch',
      'rebuild the functions when their code changes (synth, then reload; queues and their jobs stay)',
      false,
    )
    .option('--json', 'print where everything is as one JSON object, then each job line as JSON', false)
    .option(
      '--sqs-port <n>',
      'port of the local SQS endpoint (0: any free port)',
      integer(0, 65_535),
      DEFAULT_SQS_PORT,
    )
    .option(
      '--dynamodb-port <n>',
      'port of the embedded DynamoDB emulator (0: any free port; not used with --endpoint)',
      integer(0, 65_535),
      DEFAULT_DYNAMODB_PORT,
    )
    .option(
      '--scheduler-port <n>',
      'port of the embedded EventBridge Scheduler emulator (0: any free port)',
      integer(0, 65_535),
      DEFAULT_SCHEDULER_PORT,
    )
    .option('--console', 'also serve the web console for this stack (its URL is printed)', false)
    .option('--console-host <address>', 'address the console listens on', DEFAULT_CONSOLE_HOST)
    .option('--console-port <n>', 'port of the console (0: any free port)', integer(0, 65_535), 0)
    .option('--read-only', 'console without redrive', false)
    .addHelpText('after', HELP_AFTER)
    .action(async (flags: LocalFlags) => {
      const { io } = runner;
      // Checked here to name the flag (the runtime names its option endpointUrl).
      if (flags.endpoint !== undefined && !isHttpUrl(flags.endpoint.trim())) {
        runner.refuse(`--endpoint: "${flags.endpoint}" is not an http(s) URL (e.g. http://localhost:4566)`);
        return;
      }
      if (!(await hasModuleHooks())) {
        runner.refuse(
          `sqs-jobs local needs Node >= 22.15 (module.registerHooks), this is ${process.version}: install a newer Node, or add one to the project (npm install --save-dev node@24) and run it through npx`,
        );
        return;
      }
      await runner.run(async () => {
        try {
          // The console counts completions from the workers' own metric, read from their logs.
          const emf = flags.console ? new EmfCompletions() : undefined;
          const jobLines = flags.quiet ? undefined : new HeldUntilDescribed(io.stdout);
          const print = (line: string) => (jobLines ? jobLines.write(line) : io.stdout.write(line));
          const watch = flags.watch
            ? watchBeside({
                projectRoot: flags.projectRoot,
                assemblyDir: flags.assembly ?? join(flags.projectRoot, 'cdk.out'),
                onReload: (reload) => {
                  if (!reload.synthesized) return;
                  print(
                    flags.json
                      ? `${JSON.stringify({ kind: 'reload', functions: reload.functions, durationMs: Math.round(reload.durationMs) })}\n`
                      : `reloaded ${reload.functions.length === 0 ? '(no function changed)' : reload.functions.join(', ')} in ${(reload.durationMs / 1000).toFixed(1)} s\n`,
                  );
                },
                onError: (error) =>
                  io.stderr.write(
                    `error: rebuild failed, the functions keep their code: ${(error as Error).message ?? String(error)}\n`,
                  ),
              })
            : undefined;
          await serveLocal({
            projectRoot: flags.projectRoot,
            assemblyDir: flags.assembly,
            stackName: flags.stack,
            synthesize: flags.synth,
            endpoints: flags.endpoint === undefined ? undefined : { endpointUrl: flags.endpoint },
            ports: { sqs: flags.sqsPort, dynamodb: flags.dynamodbPort, scheduler: flags.schedulerPort },
            env: io.env,
            region: flags.region,
            // The dev loop: traces in logs and dead letters name the project's sources.
            sourceMaps: true,
            // The workers' completion lines, which the job lines are made of (docs/contracts.md, "Logs").
            ...(jobLines === undefined ? {} : { environment: { JOBS_LOG_EACH_RECORD: 'true' } }),
            functionLogs:
              emf === undefined && jobLines === undefined && !flags.functionLogs
                ? 'ignore'
                : (line) => {
                    if (line.stream === 'stdout') emf?.add(line.line);
                    if (flags.functionLogs) io.stderr.write(`[${line.functionLogicalId}] ${line.line}\n`);
                    const event = jobLines && jobEventOf(line.functionLogicalId, line.line);
                    if (event)
                      jobLines?.write(`${flags.json ? JSON.stringify(event) : formatJobLine(event)}\n`);
                  },
            json: flags.json,
            stdout: jobLines === undefined ? io.stdout : { write: (text: string) => jobLines.describe(text) },
            signal: io.signal ?? new AbortController().signal,
            beside: [
              ...(flags.console
                ? [
                    consoleBeside({
                      emf,
                      host: flags.consoleHost,
                      port: flags.consolePort,
                      readOnly: flags.readOnly,
                    }),
                  ]
                : []),
              ...(watch ? [watch] : []),
            ],
          });
          return CLI_EXIT.ok;
        } catch (error) {
          if (!(error instanceof LocalRuntimeError)) throw error;
          runner.refuse(error.message);
          return CLI_EXIT.cannotRun;
        }
      });
    });
}

/**
 * stdout for the job lines: the description (the first write, by serveLocal) goes first, and a
 * job line written before it (a job run while the stack was starting) waits until it is out, so
 * the first line of `--json` is always the description.
 */
class HeldUntilDescribed {
  #described = false;
  readonly #held: string[] = [];

  constructor(private readonly stdout: { write(text: string): unknown }) {}

  /** The description: written, then the job lines held until now. */
  describe(text: string): void {
    this.stdout.write(text);
    this.#described = true;
    for (const line of this.#held.splice(0)) this.stdout.write(line);
  }

  /** A job line: written now, or held until the description is out. */
  write(text: string): void {
    if (this.#described) this.stdout.write(text);
    else this.#held.push(text);
  }
}
