/**
 * What every `sqs-jobs` command shares: the connection flags (`--endpoint`, `--region`,
 * `--profile`, `--json`), flag value parsers, and running a command with an SQS client while
 * turning its errors into one `error:` line and exit code 2.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { createOpsSqsClient, type OpsClientInput } from '../ops/client.ts';
import { OpsError } from '../ops/errors.ts';
import type { OpsSqs } from '../ops/queue.ts';
import { CLI_EXIT, type CliIo, StdinError } from './io.ts';

/** Flags every command has. */
export interface ConnectionFlags {
  readonly endpoint?: string;
  readonly region?: string;
  readonly profile?: string;
  readonly json: boolean;
}

/** Adds `--endpoint`, `--region`, `--profile` and `--json`. */
export function addConnectionOptions(command: Command): Command {
  return command
    .option(
      '--endpoint <url>',
      'SQS endpoint, e.g. an emulator http://localhost:4566 (default: AWS_ENDPOINT_URL_SQS, else AWS_ENDPOINT_URL, else AWS)',
    )
    .option(
      '--region <region>',
      'AWS region (default: the region in the queue URL, else AWS_REGION, AWS_DEFAULT_REGION, us-east-1 with an endpoint, else the profile)',
    )
    .option(
      '--profile <name>',
      'AWS shared config/credentials profile for credentials and region (default: AWS_PROFILE, else the default chain)',
    )
    .option('--json', 'print JSON on stdout instead of text', false);
}

/** The flags added by {@link requiredOption}. */
const REQUIRED = new WeakSet<Option>();

/**
 * Adds a flag `command` cannot run without, checked by {@link checkRequiredOptions}. Not
 * commander's `requiredOption`: commander checks those before it looks for unknown flags, so a
 * misspelled required flag (`--dlq-ur`) was reported as a missing `--dlq-url` instead of as an
 * unknown flag with its "Did you mean --dlq-url?".
 */
export function requiredOption(command: Command, flags: string, description: string): Command {
  const option = new Option(flags, description);
  REQUIRED.add(option);
  return command.addOption(option);
}

/**
 * Checks the {@link requiredOption} flags of the command about to run, in a `preAction` hook of
 * `program`: it runs after commander has refused unknown flags, so a misspelling is named as
 * such first. A missing one ends the command with commander's own message,
 * `error: required option '<flags>' not specified` (exit code 2 through `runSqsJobsCli`).
 */
export function checkRequiredOptions(program: Command): Command {
  return program.hook('preAction', (_program, action) => {
    for (const option of action.options) {
      if (REQUIRED.has(option) && action.getOptionValue(option.attributeName()) === undefined) {
        action.error(`error: required option '${option.flags}' not specified`, {
          code: 'commander.missingMandatoryOptionValue',
        });
      }
    }
  });
}

/** Parser of a whole-number flag in [min, max]. */
export function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(
        max === Number.MAX_SAFE_INTEGER
          ? `must be a whole number >= ${min}`
          : `must be a whole number from ${min} to ${max}`,
      );
    }
    return n;
  };
}

/**
 * Parser of a flag whose empty value would match or name nothing, silently.
 * @throws {InvalidArgumentError} on an empty (or blank) value (commander prints it; exit 2).
 */
export function nonEmpty(value: string): string {
  if (value.trim() === '') {
    throw new InvalidArgumentError('an empty value matches nothing: give a value, or leave the option out.');
  }
  return value;
}

/**
 * Parser of a repeatable flag: collects every value.
 * @throws {InvalidArgumentError} on an empty (or blank) value: as a filter it would match nothing
 *   and as a name it names nothing, silently (commander prints it; the command exits 2).
 */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, nonEmpty(value)];
}

/** The client input of the connection flags, for a queue URL (its host names the region on AWS). */
export function clientInput(flags: ConnectionFlags, queueUrl: string | undefined, io: CliIo): OpsClientInput {
  return {
    endpoint: flags.endpoint,
    region: flags.region,
    profile: flags.profile,
    queueUrl,
    env: io.env,
  };
}

/** Runs commands and keeps the exit code; one per CLI invocation. */
export class CommandRunner {
  exitCode: number = CLI_EXIT.ok;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;

  constructor(readonly io: CliIo) {
    this.out = (text) => {
      io.stdout.write(text);
    };
    this.err = (text) => {
      io.stderr.write(text);
    };
  }

  /** Ends the command with `error: <message>` on stderr and exit code 2 (could not run). */
  refuse(message: string): void {
    this.err(`error: ${message}\n`);
    this.exitCode = CLI_EXIT.cannotRun;
  }

  /**
   * Runs `body`; its result is the exit code. An {@link OpsError}, `RangeError` or {@link StdinError} becomes one
   * `error:` line and exit code 2; anything else is reported with its stack, exit code 2.
   */
  async run(body: () => Promise<number>): Promise<void> {
    try {
      this.exitCode = await body();
    } catch (error) {
      if (error instanceof OpsError || error instanceof RangeError || error instanceof StdinError) {
        this.err(`error: ${error.message}\n`);
      } else {
        this.err(
          `error: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
        );
      }
      this.exitCode = CLI_EXIT.cannotRun;
    }
  }

  /** {@link run} with an SQS client made from the flags, destroyed afterwards. */
  async withSqs(
    flags: ConnectionFlags,
    queueUrl: string | undefined,
    body: (sqs: OpsSqs, input: OpsClientInput) => Promise<number>,
  ): Promise<void> {
    let sqs: (OpsSqs & { destroy?(): void }) | undefined;
    await this.run(async () => {
      try {
        const input = clientInput(flags, queueUrl, this.io);
        sqs = (this.io.createSqs ?? createOpsSqsClient)(input);
        return await body(sqs, input);
      } finally {
        sqs?.destroy?.();
      }
    });
  }
}
