/**
 * Fault decisions of the local runtime, each a seeded {@link RateFault}:
 * - the "lost response" fault ({@link LostResponseFault}): the function ran (its side effects
 *   happened) but the event source mapping treats the invocation as failed, as when a Lambda
 *   crashes after the side effect and before it acknowledges. Nothing of the batch is deleted, so
 *   every record is delivered again after the visibility timeout, and idempotency has to absorb
 *   the repeat;
 * - the Scheduler emulator's duplicate delivery (scheduler/engine.ts): a firing sent twice, as
 *   EventBridge Scheduler's at-least-once delivery may do.
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

/**
 * A fault decided event by event: forced for the next events ({@link forceNext}), else with a
 * probability ({@link setRate}) drawn from a seeded generator, so a faulty run can be repeated.
 */
export class RateFault {
  private rate: number;
  private readonly random: () => number;
  private readonly rateName: string;
  private forced = 0;
  /** Events the fault hit so far. */
  hits = 0;

  /**
   * @param rate probability in [0, 1] that an event is hit.
   * @param random uniform numbers in [0, 1).
   * @param rateName the option's name, for errors.
   * @throws {RangeError} when `rate` is outside [0, 1].
   */
  constructor(rate: number, random: () => number, rateName = 'rate') {
    this.rateName = rateName;
    this.rate = checkRate(rate, rateName);
    this.random = random;
  }

  /** Changes the rate for later events. @throws {RangeError} outside [0, 1]. */
  setRate(rate: number): void {
    this.rate = checkRate(rate, this.rateName);
  }

  /** Hits the next `count` events, whatever the rate. @throws {RangeError} unless an integer >= 0. */
  forceNext(count: number): void {
    if (!Number.isInteger(count) || count < 0)
      throw new RangeError(`count must be an integer >= 0, got ${count}`);
    this.forced += count;
  }

  /** Called once per event: true when the fault hits it. */
  decide(): boolean {
    let hit = false;
    if (this.forced > 0) {
      this.forced--;
      hit = true;
    } else if (this.rate > 0) {
      hit = this.random() < this.rate;
    }
    if (hit) this.hits++;
    return hit;
  }
}

/** Decides, per successful invocation of one function, whether its response is lost. */
export class LostResponseFault extends RateFault {
  /**
   * @param rate probability in [0, 1] that a successful invocation's response is lost.
   * @param random uniform numbers in [0, 1).
   * @throws {RangeError} when `rate` is outside [0, 1].
   */
  constructor(rate: number, random: () => number) {
    super(rate, random, 'lostResponseRate');
  }

  /** Responses lost so far. */
  get lost(): number {
    return this.hits;
  }

  /** Loses the responses of the next `count` successful invocations, whatever the rate. */
  loseNext(count: number): void {
    this.forceNext(count);
  }

  /** Called once per successful invocation: true when its response is to be lost. */
  shouldLose(): boolean {
    return this.decide();
  }
}

function checkRate(rate: number, rateName: string): number {
  if (!(rate >= 0 && rate <= 1)) throw new RangeError(`${rateName} must be in [0, 1], got ${rate}`);
  return rate;
}
