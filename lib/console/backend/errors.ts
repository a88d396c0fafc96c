/**
 * The console API's own errors: {@link ConsoleRequestError}, a client error the server answers
 * with its status and message (lib/console/server.ts); every other failure is a 502 (an
 * `OpsError` of sqs-jobs/ops) or a 500.
 */

/** A client error of the console API (the server answers 4xx with its message). */
export class ConsoleRequestError extends Error {
  override readonly name = 'ConsoleRequestError';
  constructor(
    readonly status: 400 | 403 | 404 | 409,
    message: string,
  ) {
    super(message);
  }
}

/** The message of a caught value, for the page (a message only: never a stack or a client). */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
