/**
 * The "lost response" fault: the function ran (its side effects happened) but the event source
 * mapping treats the invocation as failed, as when a Lambda crashes after the side effect and
 * before it acknowledges. Nothing of the batch is deleted, so every record is delivered again
 * after the visibility timeout, and idempotency has to absorb the repeat.
 */

/**
 * Response header by which a fake dependency (lib/sample/external-service.ts, fault `kill`) asks the
 * local runtime to kill the execution environment that made the call, right after the call's side
 * effect: value {@link KILL_CALLER_VALUE}. Honoured only by hosts started with `killOnFaultHeader`.
 */
export const FAULT_HEADER = 'x-sqs-jobs-fault';
/** Value of {@link FAULT_HEADER} that kills the caller. */
export const KILL_CALLER_VALUE = 'kill-caller';
/** Exit code of an execution environment killed on {@link FAULT_HEADER} (as SIGKILL's 128 + 9). */
export const KILLED_EXIT_CODE = 137;

/**
 * A seeded pseudo-random generator (mulberry32) of uniform numbers in [0, 1): the same seed
 * gives the same sequence, so a faulty run can be repeated.
 * @param seed any integer (taken modulo 2^32).
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Decides, per successful invocation of one function, whether its response is lost. */
export class LostResponseFault {
  private rate: number;
  private readonly random: () => number;
  private forced = 0;
  /** Responses lost so far. */
  lost = 0;

  /**
   * @param rate probability in [0, 1] that a successful invocation's response is lost.
   * @param random uniform numbers in [0, 1).
   * @throws {RangeError} when `rate` is outside [0, 1].
   */
  constructor(rate: number, random: () => number) {
    this.rate = checkRate(rate);
    this.random = random;
  }

  /** Changes the rate for later invocations. @throws {RangeError} outside [0, 1]. */
  setRate(rate: number): void {
    this.rate = checkRate(rate);
  }

  /** Loses the responses of the next `count` successful invocations, whatever the rate. */
  loseNext(count: number): void {
    if (!Number.isInteger(count) || count < 0)
      throw new RangeError(`count must be an integer >= 0, got ${count}`);
    this.forced += count;
  }

  /** Called once per successful invocation: true when its response is to be lost. */
  shouldLose(): boolean {
    let lose = false;
    if (this.forced > 0) {
      this.forced--;
      lose = true;
    } else if (this.rate > 0) {
      lose = this.random() < this.rate;
    }
    if (lose) this.lost++;
    return lose;
  }
}

function checkRate(rate: number): number {
  if (!(rate >= 0 && rate <= 1)) throw new RangeError(`lostResponseRate must be in [0, 1], got ${rate}`);
  return rate;
}
