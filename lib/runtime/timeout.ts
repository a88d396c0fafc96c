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
  return new TimedRunLimit(jobType, jobTimeoutMs, lambdaBudgetMs);
}

// One object per run, no closures: this is paid for every record.
class TimedRunLimit implements RunLimit {
  readonly #controller = new AbortController();
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly budgetMs: number;
  constructor(jobType: string, jobTimeoutMs: number, lambdaBudgetMs: number) {
    const limit = jobTimeoutMs <= lambdaBudgetMs ? 'job' : 'lambda';
    this.budgetMs = Math.max(0, Math.min(jobTimeoutMs, lambdaBudgetMs));
    this.#timer = setTimeout(abortRun, this.budgetMs, this.#controller, jobType, this.budgetMs, limit);
  }
  get signal(): AbortSignal {
    return this.#controller.signal;
  }
  dispose(): void {
    clearTimeout(this.#timer);
  }
}

function abortRun(
  controller: AbortController,
  jobType: string,
  budgetMs: number,
  limit: 'job' | 'lambda',
): void {
  controller.abort(new JobTimeoutError(jobType, budgetMs, limit));
}

/**
 * Settles with `work`, or rejects with the signal's reason as soon as it aborts. A run that
 * ignores its signal is abandoned here (the batch goes on; the run's late side effects are
 * outside the lease, which expires at the same limit anyway): waiting for it would let one stuck
 * job run the whole invocation into its timeout and fail every record of the batch.
 */
export function raceAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(ignore);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => new AbortRace(work, signal, resolve, reject).start());
}

function ignore(): void {}

/** The state of one {@link raceAbort}; its handlers are methods bound once, not closures per step. */
class AbortRace<T> {
  readonly #work: Promise<T>;
  readonly #signal: AbortSignal;
  readonly #resolve: (value: T) => void;
  readonly #reject: (reason: unknown) => void;
  constructor(
    work: Promise<T>,
    signal: AbortSignal,
    resolve: (value: T) => void,
    reject: (reason: unknown) => void,
  ) {
    this.#work = work;
    this.#signal = signal;
    this.#resolve = resolve;
    this.#reject = reject;
  }
  start(): void {
    this.#signal.addEventListener('abort', this, { once: true });
    this.#work.then(
      (value) => {
        this.#signal.removeEventListener('abort', this);
        this.#resolve(value);
      },
      (error: unknown) => {
        this.#signal.removeEventListener('abort', this);
        this.#reject(error);
      },
    );
  }
  /** The abort event (EventListener object form). */
  handleEvent(): void {
    // The abandoned run may still reject later: keep that from becoming an unhandled rejection.
    this.#work.catch(ignore);
    this.#reject(this.#signal.reason);
  }
}
