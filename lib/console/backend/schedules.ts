/**
 * The schedules page (`GET /api/schedules`, `POST /api/schedules/cancel`, `POST
 * /api/schedules/fire`) and the flow-control limits panel of the queues page (`GET /api/limits`),
 * over the operations of `sqs-jobs schedules` and `sqs-jobs stats --limits-table`
 * (lib/ops/schedules.ts, lib/ops/fire-schedule.ts, lib/ops/limits.ts): pending one-time jobs,
 * recurring schedules with their next firings in their time zone and their recent firings, a
 * cancel of a pending job and a "fire now" of a recurring schedule (both refused on a read-only
 * console), and each limit's current rate and holders.
 *
 * Reads Scan the idempotency table (the whole table, paid by the items read): the page asks once
 * when opened and on its Refresh button, never on a timer.
 */
import { fireScheduleNow } from '../../ops/fire-schedule.ts';
import { type LimitsReport, readLimits } from '../../ops/limits.ts';
import {
  type CancelScheduledJobResult,
  cancelScheduledJob,
  type FiringView,
  listScheduleGroups,
  listSchedules,
  type PendingJob,
  type RecurringScheduleView,
  recentFirings,
  type SchedulesSource,
} from '../../ops/schedules.ts';
import type { ConsoleContext } from './context.ts';
import { ConsoleRequestError, errorText } from './errors.ts';

/** Recent firings shown per recurring schedule. */
export const CONSOLE_RECENT_FIRINGS = 5;

/** The schedules page. */
export interface SchedulesView {
  /** Whether the console can read schedules at all; `note` says why not. */
  readonly available: boolean;
  readonly note: string | undefined;
  readonly groups: readonly string[];
  readonly table: string | undefined;
  readonly pending: readonly PendingJob[];
  readonly recurring: readonly (RecurringScheduleView & { readonly firings: readonly FiringView[] })[];
  readonly notes: readonly string[];
  readonly readOnly: boolean;
  /** When it was read, ISO 8601. */
  readonly at: string;
}

/** The limits panel. */
export interface LimitsView {
  readonly tables: readonly LimitsReport[];
  /** Why no limit can be read (no table), or a table's read error. */
  readonly notes: readonly string[];
}

/** The schedules page of a console. */
export class SchedulesPage {
  readonly #ctx: ConsoleContext;
  #groups: Promise<string[]> | undefined;

  constructor(ctx: ConsoleContext) {
    this.#ctx = ctx;
  }

  /** The source the operations read: the setup's scheduler and groups, its first idempotency table. */
  async #source(): Promise<SchedulesSource> {
    const { setup } = this.#ctx;
    const scheduler = setup.scheduler;
    let groups: readonly string[] = setup.scheduleGroups ?? [];
    if (setup.scheduleGroups === undefined && scheduler !== undefined) {
      this.#groups ??= listScheduleGroups(scheduler).catch((error: unknown) => {
        this.#groups = undefined;
        throw error;
      });
      groups = await this.#groups;
    }
    return {
      scheduler,
      groups,
      dynamodb: setup.dynamodb,
      table: setup.idempotencyTables[0],
    };
  }

  /** Pending jobs, recurring schedules with their next firings and recent firings. */
  async view(): Promise<SchedulesView> {
    const { setup, readOnly, now } = this.#ctx;
    const at = new Date(now()).toISOString();
    if (setup.scheduler === undefined) {
      return {
        available: false,
        note: 'this console has no EventBridge Scheduler to read (start it with --local, or against AWS)',
        groups: [],
        table: setup.idempotencyTables[0],
        pending: [],
        recurring: [],
        notes: [],
        readOnly,
        at,
      };
    }
    const source = await this.#source();
    const list = await listSchedules(source, { nowMs: now() });
    const recurring = [];
    for (const schedule of list.recurring) {
      const { firings } = await recentFirings(source, schedule, CONSOLE_RECENT_FIRINGS);
      recurring.push({ ...schedule, firings });
    }
    const notes = [...list.notes];
    if (source.table === undefined)
      notes.push('recent firings need the idempotency table: EventBridge Scheduler keeps no firing history');
    else
      notes.push(
        'recent firings are the jobs each schedule sent (ids <name>@<scheduled time>) that reached a worker; a firing Scheduler could not deliver is in the schedule dead-letter queue',
      );
    return {
      available: true,
      note: undefined,
      groups: list.groups,
      table: source.table,
      pending: list.pending,
      recurring,
      notes,
      readOnly,
      at,
    };
  }

  /**
   * Cancels a pending job sent for later (`JobClient.cancel`'s path).
   * @throws {ConsoleRequestError} 403 on a read-only console, 400 without a job id.
   */
  async cancel(request: {
    readonly jobId: string;
    readonly source?: string;
  }): Promise<CancelScheduledJobResult> {
    if (this.#ctx.readOnly)
      throw new ConsoleRequestError(403, 'this console is read-only (--read-only): no cancel');
    if (request.jobId === '')
      throw new ConsoleRequestError(400, 'jobId must be the id of a job sent for later');
    const source = await this.#source();
    if (source.table === undefined)
      throw new ConsoleRequestError(
        409,
        'this console has no idempotency table: a job sent for later cannot be cancelled',
      );
    return cancelScheduledJob(source, request.jobId, {
      ...(request.source === undefined ? {} : { source: request.source }),
      nowMs: this.#ctx.now,
    });
  }

  /**
   * Fires a recurring schedule now (lib/ops/fire-schedule.ts): its job goes to its queue with a
   * scheduled time of its own, never colliding with the real firing.
   * @throws {ConsoleRequestError} 403 on a read-only console, 404 for a group the console does not show.
   */
  async fire(request: { readonly name: string; readonly group: string }) {
    if (this.#ctx.readOnly)
      throw new ConsoleRequestError(403, 'this console is read-only (--read-only): no fire');
    const source = await this.#source();
    if (source.scheduler === undefined)
      throw new ConsoleRequestError(409, 'this console has no EventBridge Scheduler');
    if (!source.groups.includes(request.group))
      throw new ConsoleRequestError(404, `no schedule group "${request.group}" in this console`);
    try {
      return await fireScheduleNow({
        scheduler: source.scheduler,
        sqs: this.#ctx.setup.sqs,
        name: request.name,
        groupName: request.group,
        now: new Date(this.#ctx.now()),
      });
    } catch (error) {
      if ((error as { name?: unknown })?.name === 'ResourceNotFoundException')
        throw new ConsoleRequestError(404, `no schedule "${request.name}" in group ${request.group}`);
      throw error;
    }
  }

  /** Each flow-control limit of each idempotency table (lib/ops/limits.ts). */
  async limits(): Promise<LimitsView> {
    const { setup, now } = this.#ctx;
    if (setup.dynamodb === undefined || setup.idempotencyTables.length === 0)
      return { tables: [], notes: ['no idempotency table: flow-control limits are kept there'] };
    const tables: LimitsReport[] = [];
    const notes: string[] = [];
    for (const table of setup.idempotencyTables) {
      try {
        tables.push(await readLimits(setup.dynamodb as Parameters<typeof readLimits>[0], table, now()));
      } catch (error) {
        notes.push(`${table}: ${errorText(error)}`);
      }
    }
    return { tables, notes };
  }
}
