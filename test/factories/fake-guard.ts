/**
 * An in-memory idempotency guard for unit tests: keeps one entry per (jobType, key) with the
 * lease semantics of lib/runtime/idempotency/guard.ts, records every call, and can be scripted
 * to answer `begin` with a fixed outcome.
 */
import type {
  BeginOutcome,
  BeginRequest,
  IdempotencyGuard,
  Lease,
  LeaseWrite,
} from '../../lib/runtime/idempotency/guard.ts';

interface Entry {
  status: 'in-progress' | 'completed' | 'failed';
  attempt: number;
  leaseExpiresAtMs: number;
  token: number;
  payloadHash: string;
  result?: unknown;
  firstFailureAtMs?: number;
  steps: Map<string, unknown>;
}

/** A call made on a lease handed out by the fake. */
export type LeaseCall =
  | {
      readonly op: 'complete';
      readonly key: string;
      readonly result: unknown;
      /** The children's record keys the run linked (`childJobs`), when it sent any. */
      readonly children?: readonly string[];
    }
  | {
      readonly op: 'fail';
      readonly key: string;
      readonly error: unknown;
      readonly kind: 'transient' | 'permanent';
    };

export class FakeGuard implements IdempotencyGuard {
  readonly begins: BeginRequest[] = [];
  readonly leaseCalls: LeaseCall[] = [];
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;
  #script: ((request: BeginRequest) => BeginOutcome | Error | undefined) | undefined;
  #token = 0;

  readonly #journal: string[] | undefined;

  /**
   * @param options.now clock in epoch ms. @default Date.now
   * @param options.journal when given, every lease call is appended as `lease:<op>` (to check
   *   the order against other fakes' calls).
   */
  constructor(options: { now?: () => number; journal?: string[] } = {}) {
    this.#now = options.now ?? Date.now;
    this.#journal = options.journal;
  }

  /** Answers `begin` from `script` when it returns something (an Error is thrown). */
  script(script: (request: BeginRequest) => BeginOutcome | Error | undefined): this {
    this.#script = script;
    return this;
  }

  /** Makes the next run of a key see `attempt` earlier runs (as if it failed that often). */
  seed(jobType: string, key: string, fields: { attempt: number; firstFailureAtMs?: number }): this {
    this.#entries.set(`${jobType}\n${key}`, {
      status: 'failed',
      attempt: fields.attempt,
      leaseExpiresAtMs: 0,
      token: 0,
      payloadHash: '',
      ...(fields.firstFailureAtMs === undefined ? {} : { firstFailureAtMs: fields.firstFailureAtMs }),
      steps: new Map(),
    });
    return this;
  }

  async begin(request: BeginRequest): Promise<BeginOutcome> {
    this.begins.push(request);
    const scripted = this.#script?.(request);
    if (scripted instanceof Error) throw scripted;
    if (scripted) return scripted;
    const id = `${request.jobType}\n${request.key}`;
    const entry = this.#entries.get(id);
    const now = this.#now();
    if (entry?.status === 'completed') {
      return { status: 'completed', result: entry.result, resultStored: true };
    }
    if (entry?.status === 'in-progress' && entry.leaseExpiresAtMs > now) {
      return { status: 'busy', retryAfterMs: entry.leaseExpiresAtMs - now };
    }
    const next: Entry = {
      status: 'in-progress',
      attempt: (entry?.attempt ?? 0) + 1,
      leaseExpiresAtMs: request.leaseExpiresAtMs,
      token: ++this.#token,
      payloadHash: request.payloadHash,
      ...(entry?.firstFailureAtMs === undefined ? {} : { firstFailureAtMs: entry.firstFailureAtMs }),
      steps: entry?.steps ?? new Map(),
    };
    const expired = entry?.status === 'in-progress';
    this.#entries.set(id, next);
    const lease = this.#lease(id, next);
    if (expired && request.onLeaseExpired === 'dead-letter') {
      return { status: 'lease-expired', lease, previousAttempt: entry.attempt };
    }
    return { status: 'acquired', lease };
  }

  /** Builds a lease on a detached entry, for scripted `begin` answers. */
  lease(key: string, fields: { attempt: number; firstFailureAtMs?: number }): Lease {
    const entry: Entry = {
      status: 'in-progress',
      attempt: fields.attempt,
      leaseExpiresAtMs: Number.MAX_SAFE_INTEGER,
      token: ++this.#token,
      payloadHash: '',
      ...(fields.firstFailureAtMs === undefined ? {} : { firstFailureAtMs: fields.firstFailureAtMs }),
      steps: new Map(),
    };
    return this.#lease(key, entry);
  }

  /** Status of a key, for assertions. */
  statusOf(jobType: string, key: string): Entry['status'] | undefined {
    return this.#entries.get(`${jobType}\n${key}`)?.status;
  }

  #lease(key: string, entry: Entry): Lease {
    const token = entry.token;
    const holds = () => entry.token === token;
    const journal = this.#journal;
    const calls = {
      push: (call: LeaseCall) => {
        journal?.push(`lease:${call.op}`);
        this.leaseCalls.push(call);
      },
    };
    const now = this.#now;
    return {
      attempt: entry.attempt,
      firstFailureAtMs: entry.firstFailureAtMs,
      async complete(result: unknown, children?: readonly string[]): Promise<LeaseWrite> {
        calls.push({ op: 'complete', key, result, ...(children === undefined ? {} : { children }) });
        if (!holds()) return 'fenced';
        entry.status = 'completed';
        entry.result = result;
        return 'ok';
      },
      async fail(error: unknown, kind: 'transient' | 'permanent'): Promise<LeaseWrite> {
        calls.push({ op: 'fail', key, error, kind });
        if (!holds()) return 'fenced';
        entry.status = 'failed';
        entry.firstFailureAtMs ??= now();
        return 'ok';
      },
      async once<T>(stepName: string, fn: () => Promise<T>): Promise<T> {
        if (entry.steps.has(stepName)) return entry.steps.get(stepName) as T;
        const value = await fn();
        entry.steps.set(stepName, value);
        return value;
      },
      idempotencyKey(stepName: string): string {
        return `${key}#${stepName}`;
      },
    };
  }
}
