/**
 * `sqs-jobs local`: the user's own CDK app running on this machine with no workload, until
 * Ctrl-C (lib/local/serve.ts). Queues, DLQs and tables of the synthesized template are created on
 * embedded emulators (fauxqs, dynalite: the project installs them as devDependencies) or on an
 * external endpoint (moto server, LocalStack), and each worker's bundled code runs behind an
 * emulated event source mapping.
 */
import { type Command, InvalidArgumentError } from 'commander';
import { ENDPOINT_ENV } from '../../local/emulators.ts';
import { LocalRuntimeError } from '../../local/errors.ts';
import { serveLocal } from '../../local/serve.ts';
import type { CommandRunner } from './common.ts';
import { CLI_EXIT } from './io.ts';

interface LocalFlags {
  readonly projectRoot: string;
  readonly assembly?: string;
  readonly stack?: string;
  readonly synth: 'auto' | 'always' | 'never';
  readonly endpoint?: string;
  readonly region?: string;
  readonly functionLogs: boolean;
  readonly json: boolean;
}

const HELP_AFTER = `
Needs, in your project: npm install --save-dev fauxqs dynalite (the embedded SQS and DynamoDB
emulators; not needed with --endpoint), and Node >= 22.15 (the functions' module loader hooks).
Synthesis: --synth auto runs \`npx cdk synth\` in --project-root when cdk.out is missing or older
than bin/, lib/, functions/, package-lock.json or cdk.json; use --synth always after other changes.

Prints the endpoints, every queue with its dead-letter queue, the tables, and commands to paste
into another terminal (stats, dlq list, send). Local differences from AWS are printed as notes
(e.g. DynamoDB TTL does not run).

Examples:
  npx sqs-jobs local
  npx sqs-jobs local --project-root infra --stack Jobs --function-logs
  npx sqs-jobs local --endpoint http://localhost:5000 --json

Exit codes: 0 stopped with Ctrl-C, 2 could not start (missing emulators, synthesis, template).
See docs/own-app.md.`;

/** Node's synchronous module hooks (`module.registerHooks`), which the function threads use: Node 22.15+ / 23.5+. */
async function hasModuleHooks(): Promise<boolean> {
  const moduleApi = (await import('node:module')) as { registerHooks?: unknown };
  return typeof moduleApi.registerHooks === 'function';
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
    .option('--json', 'print where everything is as one JSON object', false)
    .addHelpText('after', HELP_AFTER)
    .action(async (flags: LocalFlags) => {
      const { io } = runner;
      if (!(await hasModuleHooks())) {
        runner.refuse(
          `sqs-jobs local needs Node >= 22.15 (module.registerHooks), this is ${process.version}: run it with a newer Node`,
        );
        return;
      }
      await runner.run(async () => {
        try {
          await serveLocal({
            projectRoot: flags.projectRoot,
            assemblyDir: flags.assembly,
            stackName: flags.stack,
            synthesize: flags.synth,
            endpoints: flags.endpoint === undefined ? undefined : { endpointUrl: flags.endpoint },
            env: io.env,
            region: flags.region,
            functionLogs: flags.functionLogs ? 'inherit' : 'ignore',
            json: flags.json,
            stdout: io.stdout,
            signal: io.signal ?? new AbortController().signal,
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
