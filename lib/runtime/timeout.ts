/**
 * Soft time limits of a job run: an AbortSignal that fires at the job's `timeoutSeconds` or at
 * the Lambda deadline minus the worker's margin, whichever comes first.
 */
import { JobTimeoutError } from './worker-errors.ts';

/** The signal of one run and how to stop its timer. */
export interface RunLimit {
  /** Aborted with a {@link JobTimeoutError} when the limit fires. Made on first read. */
  readonly signal: AbortSignal;
  /** Milliseconds the run may take. */
  readonly budgetMs: number;
  /** The {@link JobTimeoutError} once the limit has fired, else undefined. */
  readonly reason: JobTimeoutError | undefined;
  /**
   * Settles with `work`, or rejects with the limit's {@link JobTimeoutError} as soon as it fires
   * (the run is then abandoned, as in {@link raceAbort}).
   */
  race<T>(work: Promise<T>): Promise<T>;
  /** Stops the timer; call when the run is over. */
  dispose(): void;
}

/**
 * Starts the timer of one run.
 *
 * @param jobType for the error message.
 * @param jobTimeoutMs the job's `timeoutSeconds` in milliseconds.
 * @param lambdaBudgetMs time left in the invocation minus the worker's margin, in milliseconds.
 * @returns a limit whose signal aborts with a {@link JobTimeoutError} naming the limit that fired.
 */
export function startRunLimit(jobType: string, jobTimeoutMs: number, lambdaBudgetMs: number): RunLimit {
  return new TimedRunLimit(jobType, jobTimeoutMs, lambdaBudgetMs);
}

/**
 * One object per run and no closure per step: this is paid for every record. The AbortController
 * is made only when the job reads its signal (most small jobs never do); the race needs none.
 */
class TimedRunLimit implements RunLimit {
  readonly budgetMs: number;
  readonly #jobType: string;
  readonly #limit: 'job' | 'lambda';
  readonly #timer: ReturnType<typeof setTimeout>;
  #controller: AbortController | undefined;
  #reason: JobTimeoutError | undefined;
  #work: Promise<unknown> | undefined;
  #reject: ((reason: unknown) => void) | undefined;

  constructor(jobType: string, jobTimeoutMs: number, lambdaBudgetMs: number) {
    this.#jobType = jobType;
    this.#limit = jobTimeoutMs <= lambdaBudgetMs ? 'job' : 'lambda';
    this.budgetMs = Math.max(0, Math.min(jobTimeoutMs, lambdaBudgetMs));
    this.#timer = setTimeout(fireLimit, this.budgetMs, this);
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#reason) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get reason(): JobTimeoutError | undefined {
    return this.#reason;
  }

  /** The timer fired: abort the signal (the job's own listeners run first), then the race. */
  fire(): void {
    this.#reason = new JobTimeoutError(this.#jobType, this.budgetMs, this.#limit);
    this.#controller?.abort(this.#reason);
    const reject = this.#reject;
    if (reject) {
      this.#reject = undefined;
      // The abandoned run may still reject later: keep that from becoming an unhandled rejection.
      this.#work?.catch(ignore);
      reject(this.#reason);
    }
  }

  race<T>(work: Promise<T>): Promise<T> {
    if (this.#reason) {
      work.catch(ignore);
      return Promise.reject(this.#reason);
    }
    return new Promise<T>((resolve, reject) => {
      this.#work = work;
      this.#reject = reject;
      work.then(
        (value) => {
          this.#reject = undefined;
          resolve(value);
        },
        (error: unknown) => {
          this.#reject = undefined;
          reject(error);
        },
      );
    });
  }

  dispose(): void {
    clearTimeout(this.#timer);
    this.#reject = undefined;
  }
}

function fireLimit(limit: TimedRunLimit): void {
  limit.fire();
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
