/**
 * The errors of the EventBridge Scheduler API as the local emulator answers them: the error
 * names and HTTP statuses of the Scheduler API reference ("Common errors" and each action's
 * errors), sent the REST-JSON way (`x-amzn-errortype` header, `{"Message": ...}` body), so the
 * AWS SDK throws the same exception classes it throws against AWS.
 */

/** The Scheduler API's error names and their HTTP statuses. */
export const SCHEDULER_ERROR_STATUS = {
  ValidationException: 400,
  ResourceNotFoundException: 404,
  ConflictException: 409,
  ServiceQuotaExceededException: 402,
  ThrottlingException: 429,
  InternalServerException: 500,
} as const;

/** A Scheduler API error name. */
export type SchedulerErrorName = keyof typeof SCHEDULER_ERROR_STATUS;

/** An error the emulator answers with (never thrown out of the emulator). */
export class SchedulerApiError extends Error {
  readonly errorName: SchedulerErrorName;

  constructor(errorName: SchedulerErrorName, message: string) {
    super(message);
    this.name = 'SchedulerApiError';
    this.errorName = errorName;
  }

  /** HTTP status of the answer. */
  get status(): number {
    return SCHEDULER_ERROR_STATUS[this.errorName];
  }
}

/** `ResourceNotFoundException` for a schedule, worded as AWS (and moto) word it. */
export function scheduleNotFound(name: string): SchedulerApiError {
  return new SchedulerApiError('ResourceNotFoundException', `Schedule ${name} does not exist.`);
}

/** `ResourceNotFoundException` for a schedule group. */
export function groupNotFound(name: string): SchedulerApiError {
  return new SchedulerApiError('ResourceNotFoundException', `Schedule group ${name} does not exist.`);
}

/**
 * `ValidationException` for a member outside its constraint, in the wording AWS services use for
 * their model checks: `1 validation error detected: Value 'x' at 'name' failed to satisfy
 * constraint: Member must ...`.
 */
export function constraintError(value: unknown, at: string, constraint: string): SchedulerApiError {
  const shown = typeof value === 'string' ? value : JSON.stringify(value);
  return new SchedulerApiError(
    'ValidationException',
    `1 validation error detected: Value '${shown}' at '${at}' failed to satisfy constraint: Member must ${constraint}`,
  );
}
