/**
 * Concurrency slots in DynamoDB: at most `limit` holders per name and key, across every Lambda
 * instance. One item per key (`pk` = `limitRecordKey('concurrency', name, key)`) holds a Map
 * `holders` of holder token → expiry (epoch ms). Fenced like the idempotency lease: every
 * holder has a random token written by its own acquisition, and a holder's expiry is its job's
 * lease expiry, so a crashed run's slot counts as free once its lease has ended (plus the clock
 * margin) and is pruned by the next acquisition that needs it. A finished run removes its own
 * token (and only its own).
 *
 * Cost per acquisition: one conditional UpdateItem when a slot is free; when the item is full (or
 * new) a consistent GetItem and one conditional PutItem (pruning expired holders), repeated only
 * when another instance wrote in between. Release: one UpdateItem.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { limitRecordKey } from '../idempotency/keys.ts';
import { randomToken } from '../idempotency/record.ts';
import type { LimitTable } from './table.ts';
import { num, readNum } from './table.ts';

/** Rounds of acquisition writes before a contended key answers `full`. */
const MAX_ACQUIRE_ROUNDS = 5;

/** How long a slot item lives after its latest acquisition, in seconds (TTL `expiresAt`): 1 day. */
export const SLOT_RECORD_TTL_SECONDS = 24 * 60 * 60;

/** Input of {@link ConcurrencySlots.acquire}. */
export interface SlotRequest {
  /** The limit's name (default: the job type). */
  readonly name: string;
  /** The key counted (tenant, account...). */
  readonly key: string;
  /** Most holders at once, >= 1. */
  readonly limit: number;
  /** When this holder's slot ends unless released first, epoch ms: the job's lease expiry. */
  readonly expiresAtMs: number;
}

/** A slot held by one run. */
export interface Slot {
  /** Frees the slot (removes this holder's token only). Idempotent. @throws {LimitStoreError} */
  release(): Promise<void>;
}

/** Result of {@link ConcurrencySlots.acquire}. */
export type SlotOutcome =
  | { readonly status: 'acquired'; readonly slot: Slot }
  /** `limit` live holders: `holders` is how many, `nextExpiryMs` the earliest holder expiry. */
  | { readonly status: 'full'; readonly holders: number; readonly nextExpiryMs: number | undefined };

/** The holders of one key, as read (for operators and tests). */
export interface SlotHolders {
  readonly pk: string;
  /** Holder token → expiry (epoch ms), expired ones included. */
  readonly holders: ReadonlyMap<string, number>;
  readonly limit: number | undefined;
}

/** Concurrency slots on one table. */
export class ConcurrencySlots {
  readonly #table: LimitTable;
  readonly #now: () => number;
  readonly #marginMs: number;

  /**
   * @param marginMs clock-skew allowance: a holder counts as expired only once its expiry plus
   *   this has passed (the idempotency store's `leaseMarginMs`).
   */
  constructor(table: LimitTable, now: () => number, marginMs: number) {
    this.#table = table;
    this.#now = now;
    this.#marginMs = marginMs;
  }

  /**
   * Takes a slot of `request.key`, or says the key is full.
   * @throws {LimitStoreError} when DynamoDB fails.
   */
  async acquire(request: SlotRequest): Promise<SlotOutcome> {
    const pk = limitRecordKey('concurrency', request.name, request.key);
    const token = randomToken();
    const ttl = Math.floor(this.#now() / 1000) + SLOT_RECORD_TTL_SECONDS;
    // Fast path: the item exists with a free slot. Race prevented: the size test and the write
    // are one atomic conditional update, so two instances can never both take the last slot.
    const added = await this.#table.update('acquire-slot', pk, {
      update: 'SET holders.#t = :exp, expiresAt = :ttl, slotLimit = :limit ADD version :one',
      condition: 'attribute_exists(holders) AND size(holders) < :limit',
      names: { '#t': token },
      values: {
        ':exp': num(request.expiresAtMs),
        ':ttl': num(ttl),
        ':limit': num(request.limit),
        ':one': num(1),
      },
    });
    if (added) return this.#acquired(pk, token);

    let full: SlotOutcome = { status: 'full', holders: request.limit, nextExpiryMs: undefined };
    for (let round = 0; round < MAX_ACQUIRE_ROUNDS; round++) {
      const item = await this.#table.get('acquire-slot', pk);
      const now = this.#now();
      const holders = holdersOf(item);
      const live = liveHolders(holders, now, this.#marginMs);
      if (live.size >= request.limit) {
        const expiries = [...live.values()];
        return { status: 'full', holders: live.size, nextExpiryMs: Math.min(...expiries) };
      }
      // Prune the expired holders (crashed runs) and add this one, in one PutItem. Race
      // prevented: conditioned on the version read (or on no item), so a holder added or removed
      // by another instance since the read is never overwritten.
      live.set(token, request.expiresAtMs);
      const version = readNum(item, 'version');
      const written = await this.#table.put(
        'acquire-slot',
        slotItem(pk, live, request.limit, ttl, (version ?? 0) + 1),
        {
          condition: version === undefined ? 'attribute_not_exists(version)' : 'version = :v',
          values: version === undefined ? {} : { ':v': num(version) },
        },
      );
      if (written) return this.#acquired(pk, token);
      full = { status: 'full', holders: live.size, nextExpiryMs: undefined };
    }
    // Lost every race: as good as full (others are taking the slots right now).
    return full;
  }

  /** The holders of a key (one consistent GetItem). @throws {LimitStoreError} */
  async read(name: string, key: string): Promise<SlotHolders> {
    const pk = limitRecordKey('concurrency', name, key);
    const item = await this.#table.get('read-slots', pk);
    return { pk, holders: holdersOf(item), limit: readNum(item, 'slotLimit') };
  }

  #acquired(pk: string, token: string): SlotOutcome {
    let released = false;
    const table = this.#table;
    return {
      status: 'acquired',
      slot: {
        async release() {
          if (released) return;
          // Removes only this holder's own token: a slot pruned after expiry (and maybe taken by
          // another run) is never freed twice. Conditioned on the item, so a release never
          // creates one.
          await table.update('release-slot', pk, {
            update: 'REMOVE holders.#t ADD version :one',
            condition: 'attribute_exists(holders)',
            names: { '#t': token },
            values: { ':one': num(1) },
          });
          released = true;
        },
      },
    };
  }
}

/**
 * The holders that still count at `now`: a holder's slot ends at its expiry (its run's lease)
 * plus `marginMs` of clock skew; an expired one is a crashed run's, free to prune.
 */
export function liveHolders(
  holders: ReadonlyMap<string, number>,
  now: number,
  marginMs: number,
): Map<string, number> {
  return new Map([...holders].filter(([, expiry]) => expiry + marginMs >= now));
}

function holdersOf(item: Record<string, AttributeValue> | undefined): Map<string, number> {
  const map = item?.holders?.M ?? {};
  const holders = new Map<string, number>();
  for (const [token, value] of Object.entries(map)) {
    const expiry = Number(value.N);
    if (Number.isFinite(expiry)) holders.set(token, expiry);
  }
  return holders;
}

function slotItem(
  pk: string,
  holders: ReadonlyMap<string, number>,
  limit: number,
  ttl: number,
  version: number,
): Record<string, AttributeValue> {
  const M: Record<string, AttributeValue> = {};
  for (const [token, expiry] of holders) M[token] = num(expiry);
  return {
    pk: { S: pk },
    recordType: { S: 'concurrency-slots' },
    holders: { M },
    slotLimit: num(limit),
    version: num(version),
    expiresAt: num(ttl),
  };
}
