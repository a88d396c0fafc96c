/**
 * The worker's read of a job sent for later's state item on dynalite
 * (`DynamoIdempotencyStore.scheduledJobExists`, asked of a message far before its `runat`): true
 * for the item `JobClient` wrote, false for an id never sent for later and for an expired item.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScheduledStateTable } from '../../lib/client/scheduled-state.ts';
import { scheduledJobKey, stateExpiresAt } from '../../lib/core/scheduled-job.ts';
import { DynamoIdempotencyStore } from '../../lib/runtime/idempotency/store.ts';
import { type DynaliteHandle, startDynalite } from '../support/dynalite.ts';

let db: DynaliteHandle;
let tableName: string;
const SOURCE = '/services/booking';
const NOW_MS = Date.parse('2026-11-30T08:00:00.000Z');

beforeAll(async () => {
  db = await startDynalite();
  tableName = await db.createTable();
});

afterAll(async () => {
  await db?.stop();
});

async function writeState(id: string, runAtMs: number, nowMs: number): Promise<void> {
  const table = new ScheduledStateTable(db.client, tableName, () => nowMs);
  const written = await table.create({
    pk: scheduledJobKey(SOURCE, id),
    state: 'pending',
    generation: 1,
    runAt: new Date(runAtMs).toISOString(),
    runAtMs,
    queue: 'holds',
    type: 'booking.expire-hold',
    source: SOURCE,
    jobId: id,
    via: 'schedule',
    scheduleName: `sj-${id}`,
    body: '{}',
    expiresAt: stateExpiresAt(runAtMs, nowMs),
  });
  expect(written.ok).toBe(true);
}

describe('scheduledJobExists', () => {
  it('true for a job sent for later, false for an id never sent for later or whose state expired', async () => {
    const store = new DynamoIdempotencyStore({ tableName, client: db.client, now: () => NOW_MS });
    await writeState('hold-real', NOW_MS + 90 * 86_400_000, NOW_MS);
    // Due long ago, written long ago: its TTL (14 days after its time) has passed.
    await writeState('hold-old', NOW_MS - 60 * 86_400_000, NOW_MS - 61 * 86_400_000);
    expect(await store.scheduledJobExists(SOURCE, 'hold-real')).toBe(true);
    expect(await store.scheduledJobExists('/services/other', 'hold-real')).toBe(false);
    expect(await store.scheduledJobExists(SOURCE, 'hand-made')).toBe(false);
    expect(await store.scheduledJobExists(SOURCE, 'hold-old')).toBe(false);
  });
});
