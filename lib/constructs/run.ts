/**
 * `runJobsApp`: runs a CDK app's entry point so that a refused configuration prints as what it
 * is, a list of problems, instead of a Node stack trace under `cdk synth` / `cdk deploy`.
 *
 * The process ends at once (`process.exit(1)`), not by setting an exit code: an App run by the
 * CDK CLI synthesizes itself when the process is about to exit, and the half-built stack left
 * by the refused construct would then fail with a long, unrelated validation trace.
 */
import * as fs from 'node:fs';
import { JobsConstructError } from './errors.ts';

/** Options of {@link runJobsApp}; the defaults are the process's. */
export interface RunJobsAppOptions {
  /** Where the problems are written. @default process.stderr, written synchronously */
  readonly stderr?: (text: string) => void;
  /** Ends the process. @default process.exit (before the App's synth-on-exit can run) */
  readonly exit?: (code: number) => void;
  /**
   * Environment; `SQS_JOBS_DEBUG=1` adds the stack trace after the problems.
   * @default process.env
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Writes to stderr before returning, so `process.exit` right after loses nothing (pipes included). */
function writeStderrSync(text: string): void {
  try {
    fs.writeSync(2, text);
  } catch {
    process.stderr.write(text);
  }
}

/** An sqs-jobs construct error, also from another copy of the package (matched by name). */
function isJobsConstructError(error: unknown): error is Error {
  return (
    error instanceof JobsConstructError ||
    (error instanceof Error && (error.name === 'JobsConfigError' || error.name === 'JobsConstructError'))
  );
}

/**
 * Runs `main` (which builds the app and calls `app.synth()`). When it throws a
 * `JobsConfigError` (or another `JobsConstructError`), the error's message (one line per
 * problem) goes to stderr and the process exits with code 1 at once; any other error is
 * rethrown unchanged.
 *
 * @example
 * // bin/app.ts of a CDK app (cdk.json: "app": "npx tsx bin/app.ts")
 * await runJobsApp(() => {
 *   const app = createJobsApp();
 *   new MyJobsStack(app, 'Jobs');
 *   app.synth();
 * });
 *
 * @returns once `main` has finished (or failed and been reported).
 * @throws whatever `main` throws, except sqs-jobs construct errors.
 */
export async function runJobsApp(main: () => unknown, options: RunJobsAppOptions = {}): Promise<void> {
  const stderr = options.stderr ?? writeStderrSync;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const env = options.env ?? process.env;
  try {
    await main();
  } catch (error) {
    if (!isJobsConstructError(error)) throw error;
    stderr(`${error.message}\n`);
    if (env.SQS_JOBS_DEBUG === '1' && error.stack !== undefined) stderr(`${error.stack}\n`);
    exit(1);
  }
}
