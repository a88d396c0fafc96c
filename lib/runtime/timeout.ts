/**
 * Soft time limits of a job run: an AbortSignal that fires at the job's `timeoutSeconds` or at
 * the Lambda deadline minus the worker's margin, whichever comes first.
 */
import { JobTimeoutError } from './worker-errors.ts';

/** The signal of one run and how to stop its timer. */
export interface RunLimit {
  readonly signal: AbortSignal;
  /** Milliseconds the run may take. */
  readonly budgetMs: number;
  /** Stops the timer; call when the run is over. */
  dispose(): void;
}

/**
 * Starts the timer of one run.
 *
 * @param jobType for the error message.
 * @param jobTimeoutMs the job's `timeoutSeconds` in milliseconds.
 * @param lambdaBudgetMs time left in the invocation minus the worker's margin, in milliseconds.
 * @returns a signal aborted with a {@link JobTimeoutError} naming the limit that fired.
 */
export function startRunLimit(jobType: string, jobTimeoutMs: number, lambdaBudgetMs: number): RunLimit {
  const controller = new AbortController();
  const limit = jobTimeoutMs <= lambdaBudgetMs ? 'job' : 'lambda';
  const budgetMs = Math.max(0, Math.min(jobTimeoutMs, lambdaBudgetMs));
  const timer = setTimeout(() => controller.abort(new JobTimeoutError(jobType, budgetMs, limit)), budgetMs);
  return { signal: controller.signal, budgetMs, dispose: () => clearTimeout(timer) };
}

/**
 * Settles with `work`, or rejects with the signal's reason as soon as it aborts. A run that
 * ignores its signal is abandoned here (the batch goes on; the run's late side effects are
 * outside the lease, which expires at the same limit anyway): waiting for it would let one stuck
 * job run the whole invocation into its timeout and fail every record of the batch.
 */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      // The abandoned run may still reject later: keep that from becoming an unhandled rejection.
      work.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
