/**
 * Errors of the CDK constructs: one base class for the module, subclasses set `name`.
 * Construct code never imports the Lambda runtime (lib/runtime), so it has its own errors.
 */

/** Base class of every error thrown by the sqs-jobs constructs. */
export class JobsConstructError extends Error {
  /** Construct path (`node.path`) of the construct that refused its settings. */
  readonly constructPath: string;

  constructor(message: string, constructPath: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JobsConstructError';
    this.constructPath = constructPath;
  }
}

/**
 * Thrown by a construct whose settings are unsafe or impossible (for example a FIFO queue with
 * `batchSize` 20). Every problem found is listed in the one message and in {@link problems},
 * each starting with the name of the setting, so a single synth shows all of them.
 */
export class JobsConfigError extends JobsConstructError {
  /** One entry per problem, each `<setting>: <what is wrong> [<source>]`. */
  readonly problems: readonly string[];

  constructor(what: string, constructPath: string, problems: readonly string[]) {
    super(
      `${what} at ${constructPath} has ${problems.length} unsafe setting${problems.length === 1 ? '' : 's'}:\n` +
        problems.map((p) => `  - ${p}`).join('\n'),
      constructPath,
    );
    this.name = 'JobsConfigError';
    this.problems = problems;
  }
}
