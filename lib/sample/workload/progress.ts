/** Progress of a running workload: its shape and how it is reported. */

/** Progress of a running workload, for a progress bar or log lines. */
export interface WorkloadProgress {
  readonly phase: 'seeding' | 'sending' | 'running' | 'collecting' | 'done';
  /** Jobs sent by the workload so far. */
  readonly sent: number;
  readonly completed: number;
  readonly deadLettered: number;
  /**
   * Jobs expected by the end: from the start the plan's count (every chain completing), then what
   * the run projects (grows and shrinks as chains complete or stop).
   */
  readonly total: number;
  /** Messages visible, in flight or delayed in the main queues. */
  readonly inQueues: number;
  readonly elapsedMs: number;
}

/** The figures a phase measures (or not). */
type Figures = Pick<WorkloadProgress, 'completed' | 'deadLettered' | 'total' | 'inQueues'>;

/**
 * Reports {@link WorkloadProgress}, with the elapsed time counted from `t0` (epoch ms) and
 * `expectedTotal` jobs (the plan's) until a phase measures the total: seeding and sending already
 * say how many jobs the run is about, instead of "of ~0".
 */
export class ProgressReporter {
  readonly #onProgress: (progress: WorkloadProgress) => void;
  readonly #t0: number;
  #sent = 0;
  // The last figures seen, carried into the phases that do not measure them.
  #last: Figures;

  constructor(onProgress: (progress: WorkloadProgress) => void, t0: number, expectedTotal: number) {
    this.#onProgress = onProgress;
    this.#t0 = t0;
    this.#last = { completed: 0, deadLettered: 0, total: expectedTotal, inQueues: 0 };
  }

  /** Counts `count` more jobs sent. */
  addSent(count: number): void {
    this.#sent += count;
  }

  /** Reports a phase with the figures it measured. */
  report(phase: WorkloadProgress['phase'], measured: Partial<Figures> = {}): void {
    this.#last = { ...this.#last, ...measured };
    this.#onProgress({ phase, sent: this.#sent, ...this.#last, elapsedMs: Date.now() - this.#t0 });
  }
}
