/**
 * When the local Scheduler emulator fires: one wake-up per enabled schedule, at its next firing
 * time by lib/core/schedule-expression.ts (real time zones, daylight saving as AWS does it),
 * re-armed after each firing and on every change of the schedule.
 *
 * - `at(...)`: fires once at its time, to the second (AWS: within that minute); a time already
 *   past when the schedule is created fires at once. `StartDate`/`EndDate` do not apply (AWS
 *   ignores them for one-time schedules).
 * - `rate(...)`: first at `StartDate`, or one interval after creation; then every interval.
 * - `cron(...)`: each matching time in `ScheduleExpressionTimezone`, from `StartDate`, before `EndDate`.
 * - `State: DISABLED` never fires; `FlexibleTimeWindow` FLEXIBLE fires at the window's start.
 * - `ActionAfterCompletion: DELETE` deletes the schedule once its last firing is settled.
 * - An update re-plans from now; a firing planned for an older version is dropped.
 *
 * Each firing is delivered by delivery.ts; the duplicate-delivery fault sends a firing twice
 * (same body, same execution id), as Scheduler's at-least-once delivery may.
 */
import { instantOfWallClock, nextFirings } from '../../core/schedule-expression.ts';
import { manualScheduledTime, scheduledTimeText } from '../../core/scheduler-context.ts';
import type { RateFault } from '../faults.ts';
import { SchedulerApiError } from './api-errors.ts';
import type { SchedulerClock } from './clock.ts';
import { type DeliveryContext, deliverFiring, type FiringRecord, newExecutionId } from './delivery.ts';
import { type Schedule, type ScheduleChange, type ScheduleStore, scheduleKey } from './store.ts';

/** Counters of the emulator since it started. */
export interface SchedulerStats {
  /** Firings of schedules (not the operator's), each counted once. */
  readonly fired: number;
  /** Operator's firings ({@link SchedulerEngine.fireNow}). */
  readonly firedManually: number;
  /** Firings (of either kind) delivered to their queue. */
  readonly delivered: number;
  /** Firings delivered twice (duplicate-delivery fault, or fire now with `duplicate`). */
  readonly deliveredTwice: number;
  /** Attempts after a failed one. */
  readonly retries: number;
  readonly deadLettered: number;
  readonly dropped: number;
  /** Schedules deleted after completion (`ActionAfterCompletion: DELETE`). */
  readonly deletedAfterCompletion: number;
}

/** Options of {@link SchedulerEngine.fireNow}. */
export interface FireNowOptions {
  /** @default 'default' */
  readonly groupName?: string;
  /** Deliver the operator's firing twice (to show that idempotency absorbs it). @default false */
  readonly duplicate?: boolean;
}

/** Most firing records kept for {@link SchedulerEngine.firings}. */
const HISTORY_LIMIT = 10_000;

/** Fires the schedules of a {@link ScheduleStore}. */
export class SchedulerEngine {
  private readonly timers = new Map<string, () => void>();
  /** Scheduled time (ms) of the last firing per schedule key, since its last change. */
  private readonly lastFired = new Map<string, number>();
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Deliveries working now (not waiting for a retry). */
  private active = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly history: FiringRecord[] = [];
  private readonly counters = {
    fired: 0,
    firedManually: 0,
    delivered: 0,
    deliveredTwice: 0,
    retries: 0,
    deadLettered: 0,
    dropped: 0,
    deletedAfterCompletion: 0,
  };
  private stopped = false;

  constructor(
    private readonly store: ScheduleStore,
    private readonly clock: SchedulerClock,
    private readonly delivery: Omit<DeliveryContext, 'clock'>,
    /** Decides, per schedule firing, whether it is delivered twice. */
    private readonly duplicates: RateFault,
  ) {}

  /** The store's change listener: plans or cancels the schedule's next firing. */
  readonly onChange = (change: ScheduleChange): void => {
    const key =
      change.kind === 'delete' ? change.key : scheduleKey(change.schedule.GroupName, change.schedule.Name);
    this.timers.get(key)?.();
    this.timers.delete(key);
    this.lastFired.delete(key);
    if (change.kind === 'upsert') this.arm(change.schedule);
  };

  /** The next firing of `schedule` after its last one (or now), in epoch ms; undefined when none. */
  nextFiring(schedule: Schedule): number | undefined {
    const key = scheduleKey(schedule.GroupName, schedule.Name);
    const last = this.lastFired.get(key);
    const expression = schedule.expression;
    const timeZone = schedule.ScheduleExpressionTimezone;
    if (expression.kind === 'at')
      return last === undefined ? instantOfWallClock(expression.wallClock, timeZone).getTime() : undefined;
    const after = new Date(last ?? this.clock.now());
    const [next] = nextFirings(expression, {
      timeZone,
      after,
      count: 1,
      startDate:
        schedule.StartDate !== undefined
          ? new Date(schedule.StartDate)
          : expression.kind === 'rate'
            ? new Date(schedule.CreationDate)
            : undefined,
      endDate: schedule.EndDate === undefined ? undefined : new Date(schedule.EndDate),
    });
    return next?.getTime();
  }

  private arm(schedule: Schedule): boolean {
    if (this.stopped || schedule.State === 'DISABLED') return false;
    const at = this.nextFiring(schedule);
    if (at === undefined) return false;
    const key = scheduleKey(schedule.GroupName, schedule.Name);
    const cancel = this.clock.at(Math.max(at, this.clock.now()), () => this.fire(key, schedule.version, at));
    this.timers.set(key, cancel);
    return true;
  }

  private fire(key: string, version: number, scheduledMs: number): void {
    this.timers.delete(key);
    const schedule = this.store.find(key);
    if (this.stopped || !schedule || schedule.version !== version || schedule.State === 'DISABLED') return;
    this.lastFired.set(key, scheduledMs);
    const hasNext = this.arm(schedule);
    this.counters.fired += 1;
    const copies = this.duplicates.decide() ? 2 : 1;
    const { settled } = this.start(schedule, scheduledTimeText(new Date(scheduledMs)), false, copies);
    if (!hasNext && schedule.ActionAfterCompletion === 'DELETE') {
      void settled.then(() => {
        if (this.store.find(key)?.version !== version) return;
        this.store.delete(schedule.Name, schedule.GroupName);
        this.counters.deletedAfterCompletion += 1;
      });
    }
  }

  /**
   * Fires a schedule now, as an operator would ("run tonight's invoices now"): its target gets
   * the `Input` with `<aws.scheduler.scheduled-time>` = the request time with milliseconds
   * (lib/core/scheduler-context.ts `manualScheduledTime`), an identity distinct from every real
   * firing. The schedule's own plan is not changed; a DISABLED schedule can be fired too.
   * @returns the firing's record once it is settled (delivered, dead-lettered or dropped).
   * @throws {SchedulerApiError} ResourceNotFoundException when there is no such schedule.
   */
  async fireNow(name: string, options: FireNowOptions = {}): Promise<FiringRecord> {
    return this.startFireNow(name, options).settled;
  }

  /**
   * {@link fireNow}, returning at once: the firing's record (updated as it goes) and the promise
   * of its settling.
   * @throws {SchedulerApiError} ResourceNotFoundException when there is no such schedule.
   */
  startFireNow(
    name: string,
    options: FireNowOptions = {},
  ): { record: FiringRecord; settled: Promise<FiringRecord> } {
    const schedule = this.store.get(name, options.groupName ?? 'default');
    if (this.stopped)
      throw new SchedulerApiError('InternalServerException', 'the Scheduler emulator is stopped');
    this.counters.firedManually += 1;
    return this.start(
      schedule,
      manualScheduledTime(new Date(this.clock.now())),
      true,
      options.duplicate ? 2 : 1,
    );
  }

  private start(
    schedule: Schedule,
    scheduledTime: string,
    manual: boolean,
    copies: number,
  ): { record: FiringRecord; settled: Promise<FiringRecord> } {
    const record: FiringRecord = {
      scheduleArn: schedule.Arn,
      name: schedule.Name,
      groupName: schedule.GroupName,
      scheduledTime,
      executionId: newExecutionId(),
      manual,
      copies,
      firedAtMs: this.clock.now(),
      outcome: 'pending',
      attempts: 0,
      messageIds: [],
    };
    this.history.push(record);
    if (this.history.length > HISTORY_LIMIT) this.history.shift();
    const busy = (delta: 1 | -1) => {
      this.active += delta;
      if (this.active === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    };
    const run = deliverFiring(schedule, record, { ...this.delivery, clock: this.clock, busy }).then((r) => {
      this.counters.retries += Math.max(0, r.attempts - 1);
      if (r.outcome === 'delivered') {
        this.counters.delivered += 1;
        if (r.copies > 1) this.counters.deliveredTwice += 1;
      } else if (r.outcome === 'dead-lettered') this.counters.deadLettered += 1;
      else if (r.outcome === 'dropped') this.counters.dropped += 1;
      return r;
    });
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
    return { record, settled: run };
  }

  /** The firings so far (the last 10,000), oldest first; records of pending firings change as they settle. */
  firings(): readonly FiringRecord[] {
    return [...this.history];
  }

  stats(): SchedulerStats {
    return { ...this.counters };
  }

  /** The planned next firing of each enabled schedule, by `<group>/<name>` (epoch ms). */
  planned(): Map<string, number> {
    const out = new Map<string, number>();
    for (const key of this.timers.keys()) {
      const schedule = this.store.find(key);
      const at = schedule && this.nextFiring(schedule);
      if (at !== undefined) out.set(key, at);
    }
    return out;
  }

  /**
   * Resolves once no delivery is working: every firing is settled or waiting for its next retry
   * (which comes when the clock reaches it). With a manual clock: advance, then `await idle()`.
   */
  async idle(): Promise<void> {
    // Deliveries start on a wake-up of the clock; let those queued now begin first.
    await new Promise((r) => setImmediate(r));
    while (this.active > 0) await new Promise<void>((wake) => this.idleWaiters.push(wake));
  }

  /** Resolves once every firing started so far is settled (retries included: needs the clock to move). */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Cancels every planned firing; deliveries in flight finish their current attempt. */
  stop(): void {
    this.stopped = true;
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
  }
}
