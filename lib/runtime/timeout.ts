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
 * Starts the limit of one run, on its own timer (see {@link RunLimitClock} for the shared one).
 *
 * @param jobType for the error message.
 * @param jobTimeoutMs the job's `timeoutSeconds` in milliseconds.
 * @param lambdaBudgetMs time left in the invocation minus the worker's margin, in milliseconds.
 * @returns a limit whose signal aborts with a {@link JobTimeoutError} naming the limit that fired.
 */
export function startRunLimit(jobType: string, jobTimeoutMs: number, lambdaBudgetMs: number): RunLimit {
  return new RunLimitClock({ keepArmed: false }).start(jobType, jobTimeoutMs, lambdaBudgetMs);
}

/**
 * The timer of every run limit of one invocation: one `setTimeout`, armed at the earliest
 * deadline of the runs in flight, instead of a `setTimeout` + `clearTimeout` per record (4–5 % of
 * the worker's CPU per record in bench/profile.ts, issue 10). With one job time limit the first
 * run's deadline is the earliest, so a batch of quick jobs arms it once. When it fires it aborts
 * the runs whose deadline has passed and re-arms for the next one. Created per invocation and
 * {@link dispose}d at its end: nothing is kept between invocations.
 */
export class RunLimitClock {
  readonly #now: () => number;
  readonly #keepArmed: boolean;
  /**
   * Runs started since the timer last fired, ended ones included (marked `ended`): a push and a
   * flag per run instead of a Set insert and delete (which showed in the profile); the list lives
   * one invocation, so it holds at most one batch.
   */
  #runs: TimedRunLimit[] = [];
  #inFlight = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Epoch milliseconds the timer is armed for; +Infinity when it is not. */
  #timerAtMs = Number.POSITIVE_INFINITY;

  /**
   * @param options.now clock, epoch milliseconds. @default Date.now
   * @param options.keepArmed keep the timer when no run is in flight, until {@link dispose}: a
   *   batch whose records run one after the other (a FIFO group) then arms it once, not once per
   *   record. Without it (false) the timer stops with the last run. @default true
   */
  constructor(options: { readonly now?: () => number; readonly keepArmed?: boolean } = {}) {
    this.#now = options.now ?? Date.now;
    this.#keepArmed = options.keepArmed ?? true;
  }

  /** Starts the limit of one run (parameters as {@link startRunLimit}); its `dispose` ends it. */
  start(jobType: string, jobTimeoutMs: number, lambdaBudgetMs: number): RunLimit {
    const limit = new TimedRunLimit(jobType, jobTimeoutMs, lambdaBudgetMs, this, this.#now());
    this.#runs.push(limit);
    this.#inFlight += 1;
    if (limit.deadlineAtMs < this.#timerAtMs) this.#arm(limit.deadlineAtMs, limit.budgetMs);
    return limit;
  }

  /** A run is over: its deadline no longer matters (an armed timer stays; when it fires it re-arms for the runs left, if any). */
  end(limit: TimedRunLimit): void {
    if (limit.ended) return;
    limit.ended = true;
    this.#inFlight -= 1;
    if (this.#inFlight === 0 && !this.#keepArmed) this.#disarm();
  }

  /** Stops the timer and forgets every run: the invocation is over. */
  dispose(): void {
    this.#runs = [];
    this.#inFlight = 0;
    this.#disarm();
  }

  #arm(atMs: number, delayMs: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerAtMs = atMs;
    this.#timer = setTimeout(tick, delayMs, this);
  }

  #disarm(): void {
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAtMs = Number.POSITIVE_INFINITY;
  }

  /** The timer fired: fire the runs whose deadline has passed, then arm for the earliest left. */
  tick(): void {
    this.#timer = undefined;
    this.#timerAtMs = Number.POSITIVE_INFINITY;
    const nowMs = this.#now();
    let next: TimedRunLimit | undefined;
    const runs = this.#runs;
    const left: TimedRunLimit[] = [];
    this.#runs = left;
    for (const limit of runs) {
      if (limit.ended) continue;
      if (limit.deadlineAtMs <= nowMs) {
        limit.ended = true;
        this.#inFlight -= 1;
        limit.fire();
      } else {
        left.push(limit);
        if (next === undefined || limit.deadlineAtMs < next.deadlineAtMs) next = limit;
      }
    }
    // A timer may wake a millisecond before the wall clock says the deadline passed: at least 1 ms.
    if (next) this.#arm(next.deadlineAtMs, Math.max(1, next.deadlineAtMs - nowMs));
  }
}

function tick(clock: RunLimitClock): void {
  clock.tick();
}

/**
 * One object per run and no closure per step: this is paid for every record. The AbortController
 * is made only when the job reads its signal (most small jobs never do); the race needs none.
 */
class TimedRunLimit implements RunLimit {
  readonly budgetMs: number;
  /** Epoch milliseconds at which the limit fires. */
  readonly deadlineAtMs: number;
  /** Disposed or fired: its clock no longer watches it. */
  ended = false;
  readonly #jobType: string;
  readonly #limit: 'job' | 'lambda';
  readonly #clock: RunLimitClock;
  #controller: AbortController | undefined;
  #reason: JobTimeoutError | undefined;
  #work: Promise<unknown> | undefined;
  #reject: ((reason: unknown) => void) | undefined;

  constructor(
    jobType: string,
    jobTimeoutMs: number,
    lambdaBudgetMs: number,
    clock: RunLimitClock,
    nowMs: number,
  ) {
    this.#jobType = jobType;
    this.#limit = jobTimeoutMs <= lambdaBudgetMs ? 'job' : 'lambda';
    this.budgetMs = Math.max(0, Math.min(jobTimeoutMs, lambdaBudgetMs));
    this.deadlineAtMs = nowMs + this.budgetMs;
    this.#clock = clock;
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

  /** The deadline passed: abort the signal (the job's own listeners run first), then the race. */
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
    this.#clock.end(this);
    this.#reject = undefined;
  }
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
