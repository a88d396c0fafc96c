/**
 * Redrives from the page (`POST /api/queues/:id/redrive`), as `sqs-jobs dlq redrive` does them:
 * the same `redriveDeadLetters` of sqs-jobs/ops (FIFO-safe), the same filter, no other limit,
 * and a dry run first. A dry run returns a plan; a confirmed run needs that plan. Each confirmed
 * run is kept so that lib/console/backend/verify.ts can check what came back.
 */
import { randomUUID } from 'node:crypto';
import type { DeadLetterFilter } from '../../ops/filters.ts';
import { describeFilter } from '../../ops/filters.ts';
import { type MovedItem, redriveDeadLetters, redriveScope } from '../../ops/redrive/index.ts';
import type { ConsoleContext } from './context.ts';
import { CONSOLE_DEFAULTS } from './defaults.ts';
import { ConsoleRequestError } from './errors.ts';

/** A dry run's plan, confirmable once within {@link CONSOLE_DEFAULTS.planTtlMs}. */
interface Plan {
  readonly id: string;
  readonly queueId: string;
  readonly filter: DeadLetterFilter;
  /** Messages the dry run selected (shown; a confirmed run moves what matches when it runs). */
  readonly count: number;
  readonly createdAt: number;
  used: boolean;
}

/** A confirmed redrive: what it moved and which DLQ messages it had seen. */
export interface RedriveRecord {
  readonly id: string;
  readonly queueId: string;
  readonly dlqUrl: string;
  readonly redriven: readonly MovedItem[];
  readonly seen: readonly string[];
  /** Epoch ms. */
  readonly at: number;
}

/** What a redrive request asks for. */
export interface RedriveRequest {
  readonly filter?: DeadLetterFilter;
  readonly dryRun: boolean;
  /** The plan of a dry run: needed when `dryRun` is false. */
  readonly planId?: string;
}

function item(i: { messageId: string; jobId?: string; jobType: string; reason: string }) {
  return { messageId: i.messageId, jobId: i.jobId, jobType: i.jobType, reason: i.reason };
}

/** The plans and redrives of one console. */
export class Redrives {
  readonly #ctx: ConsoleContext;
  readonly #plans = new Map<string, Plan>();
  readonly #redrives = new Map<string, RedriveRecord>();

  constructor(ctx: ConsoleContext) {
    this.#ctx = ctx;
  }

  /**
   * A confirmed redrive by id.
   * @throws {ConsoleRequestError} 404 when this console ran none by that id.
   */
  find(redriveId: string): RedriveRecord {
    const redrive = this.#redrives.get(redriveId);
    if (redrive === undefined) throw new ConsoleRequestError(404, `no redrive ${redriveId} in this console`);
    return redrive;
  }

  /**
   * A redrive of a queue's DLQ back to the queue. With `dryRun`, reads and selects only and
   * returns a plan id and what a confirmed run will move ({@link redriveScope}: on a FIFO DLQ also
   * the messages behind each group's first, which no dry run can see); without, needs the plan id
   * of a dry run of the same queue (at most {@link CONSOLE_DEFAULTS.planTtlMs} old, used once,
   * that selected something) and moves what matches its filter when it runs.
   * @throws {ConsoleRequestError} 403 on a read-only console, 409 without a usable plan.
   */
  async run(queueId: string, request: RedriveRequest) {
    const ctx = this.#ctx;
    if (ctx.readOnly)
      throw new ConsoleRequestError(403, 'this console is read-only (--read-only): no redrive');
    const queue = ctx.queue(queueId);
    const dlqUrl = await ctx.sampler.dlqUrlOf(queue);
    let filter = request.filter ?? {};
    let plan: Plan | undefined;
    if (!request.dryRun) {
      plan = this.#confirmable(queue.id, request.planId);
      plan.used = true;
      filter = plan.filter;
    }
    const result = await ctx.dlqs.exclusive(dlqUrl, () =>
      redriveDeadLetters({
        sqs: ctx.setup.sqs,
        dlqUrl,
        targetUrl: queue.url,
        filter,
        dryRun: request.dryRun,
        waitTimeSeconds: ctx.dlqs.waitTimeSeconds,
        now: ctx.now,
      }),
    );
    const skipped = { notSelected: 0, groupBlocked: 0, cameBack: 0 };
    for (const s of result.skipped) {
      if (s.why === 'not-selected') skipped.notSelected += 1;
      else if (s.why === 'group-blocked') skipped.groupBlocked += 1;
      else skipped.cameBack += 1;
    }
    const common = {
      dlq: result.plan.dlq.name,
      target: result.plan.target.name,
      fifo: result.plan.dlq.fifo,
      filter: describeFilter(filter),
      warnings: result.plan.warnings,
      read: result.read,
      notRead: result.notRead,
      skipped,
      releaseFailures: result.release.failed.length,
    };
    if (request.dryRun) {
      const id = this.#plan(queue.id, filter, result.selected.length);
      return {
        ...common,
        dryRun: true as const,
        planId: id,
        selected: result.selected.length,
        scope: redriveScope(result),
        sample: result.selected.slice(0, 20).map(item),
      };
    }
    const redriven = [...result.moved, ...result.notDeleted];
    const id = randomUUID();
    this.#redrives.set(id, {
      id,
      queueId: queue.id,
      dlqUrl,
      redriven,
      seen: result.seenMessageIds,
      at: ctx.now(),
    });
    return {
      ...common,
      dryRun: false as const,
      redriveId: id,
      dryRunSelected: plan?.count ?? 0,
      moved: result.moved.map(item),
      failed: result.failed.map((f) => ({ ...item(f), code: f.code, message: f.message })),
      notDeleted: result.notDeleted.map((f) => ({ ...item(f), code: f.code, message: f.message })),
      stoppedBy: result.stoppedBy,
    };
  }

  /** The plan a confirmed run of `queueId` may carry out. */
  #confirmable(queueId: string, planId: string | undefined): Plan {
    const plan = planId === undefined ? undefined : this.#plans.get(planId);
    if (plan === undefined || plan.queueId !== queueId) {
      throw new ConsoleRequestError(409, 'run a dry run first: a redrive needs the plan of a dry run');
    }
    if (plan.used) throw new ConsoleRequestError(409, 'this plan was already carried out: run a new dry run');
    if (this.#ctx.now() - plan.createdAt > CONSOLE_DEFAULTS.planTtlMs) {
      throw new ConsoleRequestError(409, 'the dry run is older than 10 minutes: run it again');
    }
    if (plan.count === 0) throw new ConsoleRequestError(409, 'the dry run selected nothing to move');
    return plan;
  }

  /** Keeps a dry run's plan (dropping expired ones) and returns its id. */
  #plan(queueId: string, filter: DeadLetterFilter, count: number): string {
    const id = randomUUID();
    const now = this.#ctx.now();
    for (const [key, old] of this.#plans) {
      if (now - old.createdAt > CONSOLE_DEFAULTS.planTtlMs) this.#plans.delete(key);
    }
    this.#plans.set(id, { id, queueId, filter, count, createdAt: now, used: false });
    return id;
  }
}

/** The answer to a redrive request (a dry run's plan, or what a confirmed run moved). */
export type RedriveView = Awaited<ReturnType<Redrives['run']>>;
