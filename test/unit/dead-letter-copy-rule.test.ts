/**
 * The rule that tells a copy of a dead-lettered job from a redrive of it (idempotency/decide.ts,
 * `isCopyOfDeadLetter`), through the guard a worker asks: a message of the same job under another
 * messageId that SQS accepted before the dead-lettering began is absorbed; one sent after (any
 * redrive), or whose send time is unknown, runs. The MemoryIdempotencyStore decides with the
 * DynamoDB store's own code; test/integration/dead-letter-copies.test.ts runs it on the emulators.
 */
import { describe, expect, it } from 'vitest';
import { PermanentError } from '../../lib/core/errors.ts';
import type { BeginRequest, Lease } from '../../lib/runtime/idempotency/guard.ts';
import { MemoryIdempotencyStore } from '../../lib/testing/memory-store.ts';

const DEAD_LETTERING_AT_MS = 1_800_000_000_000;

function request(messageId: string, sentAtMs?: number): BeginRequest {
  return {
    jobType: 'orders.charge',
    key: '/shop\no-1',
    payloadHash: 'a'.repeat(64),
    leaseExpiresAtMs: DEAD_LETTERING_AT_MS + 60_000,
    onLeaseExpired: 'rerun',
    messageId,
    ...(sentAtMs === undefined ? {} : { sentAtMs }),
  };
}

/** A store whose job was run by message `m-1` and dead-lettered, dated before its DLQ send. */
async function deadLettered(): Promise<MemoryIdempotencyStore> {
  let now = DEAD_LETTERING_AT_MS - 500;
  const store = new MemoryIdempotencyStore({ now: () => now });
  const begun = await store.begin(request('m-1', DEAD_LETTERING_AT_MS - 1_000));
  expect(begun.status).toBe('acquired');
  now = DEAD_LETTERING_AT_MS + 40; // the lease is ended after the DLQ send
  const lease = (begun as { lease: Lease }).lease;
  expect(await lease.fail(new PermanentError('card declined'), 'permanent', DEAD_LETTERING_AT_MS)).toBe('ok');
  return store;
}

describe('a message of a dead-lettered job under another messageId', () => {
  it('sent before the dead-lettering began is a copy: absorbed, naming the dead-lettered message', async () => {
    const store = await deadLettered();
    expect(await store.begin(request('m-2', DEAD_LETTERING_AT_MS - 1))).toEqual({
      status: 'dead-lettered',
      copyOf: 'm-1',
    });
    expect(store.record('orders.charge', '/shop\no-1')).toMatchObject({ status: 'FAILED', attempt: 1 });
  });

  it('sent after it is a redrive: it runs, as a new cycle of attempts', async () => {
    const store = await deadLettered();
    const begun = await store.begin(request('m-3', DEAD_LETTERING_AT_MS + 5_000));
    expect(begun.status).toBe('acquired');
    expect((begun as { lease: Lease }).lease.attempt).toBe(1);
  });

  it('sent in the same millisecond runs (when in doubt, a redrive is never swallowed)', async () => {
    const store = await deadLettered();
    expect((await store.begin(request('m-4', DEAD_LETTERING_AT_MS))).status).toBe('acquired');
  });

  it('without a send time (a hand-made event) runs', async () => {
    const store = await deadLettered();
    expect((await store.begin(request('m-5'))).status).toBe('acquired');
  });

  it('the dead-lettered message itself again is absorbed as before, with no copyOf', async () => {
    const store = await deadLettered();
    expect(await store.begin(request('m-1', DEAD_LETTERING_AT_MS - 1_000))).toEqual({
      status: 'dead-lettered',
    });
  });

  it('is dated by the failure time given, not by when the lease was ended', async () => {
    const store = await deadLettered();
    // Sent between the dead-lettering's start and the lease's end (40 ms later): after the DLQ
    // send could have begun, so it may be a redrive: it runs.
    expect((await store.begin(request('m-6', DEAD_LETTERING_AT_MS + 20))).status).toBe('acquired');
  });
});

describe('sentAtMs', () => {
  it('is refused when it is not a finite number, naming the field', async () => {
    const store = new MemoryIdempotencyStore();
    await expect(store.begin(request('m-1', Number.NaN))).rejects.toThrow(
      /sentAtMs must be a finite number \(epoch ms\) or absent, got NaN/,
    );
  });
});
