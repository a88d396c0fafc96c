/**
 * The checks the soak adds to the report: no idempotency record left IN_PROGRESS past its lease
 * (the end-of-run scan), every dead letter with the worker's evidence, p99 latency; and how the
 * soak preset turns `--jobs` and the two AWS fault shares into a run.
 */
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { AWS_FAULT_KINDS, resolveAwsFaultRates } from '../../lib/local/aws-faults.ts';
import {
  awsFaultRatesFor,
  deliberateCounts,
  jobsOf,
  SOAK_PRESET,
  START_PRESET,
  usersFor,
} from '../../lib/sample/presets.ts';
import {
  buildReport,
  type JobOutcome,
  type ReportFacts,
  renderReport,
} from '../../lib/sample/report/index.ts';
import {
  finalIdempotencyScan,
  summariseIdempotencyRecords,
} from '../../lib/sample/workload/idempotency-records.ts';

const NOW = 1_700_000_000_000;

function record(pk: string, status: string, leaseExpiresAtMs?: number): Record<string, AttributeValue> {
  return {
    pk: { S: pk },
    status: { S: status },
    ...(leaseExpiresAtMs === undefined ? {} : { leaseExpiresAtMs: { N: String(leaseExpiresAtMs) } }),
  };
}

function job(key: string, overrides: Partial<JobOutcome> = {}): JobOutcome {
  return {
    key,
    type: 'payments.capture',
    queue: 'payments',
    origin: 'sent',
    state: 'completed',
    startedAtMs: NOW,
    completedAtMs: NOW + 100,
    attempts: 1,
    ...overrides,
  };
}

function facts(overrides: Partial<ReportFacts> = {}): ReportFacts {
  return {
    startedAtMs: NOW,
    finishedAtMs: NOW + 2_000,
    bootMs: 100,
    timedOut: false,
    jobs: [job('a')],
    deadLetters: [],
    orderLogs: [],
    sideEffects: { byKey: {}, byReference: {} },
    faultsInjected: {},
    duplicatesAbsorbed: 0,
    ...overrides,
  };
}

const invariant = (facts: ReportFacts, name: string) =>
  buildReport(facts).invariants.find((i) => i.name.startsWith(name));

describe('idempotency records at the end of a run', () => {
  it('counts an IN_PROGRESS record whose lease has passed as stuck, one still leased apart, the rest by status', () => {
    const summary = summariseIdempotencyRecords(
      [
        record('job#a', 'COMPLETED', NOW - 5_000),
        record('job#b', 'IN_PROGRESS', NOW - 1),
        record('job#c', 'IN_PROGRESS', NOW + 4_000),
        record('job#d', 'RELEASED', NOW - 9_000),
        record('job#e', 'IN_PROGRESS'),
        { pk: { S: 'job#a#step#capture' }, recordType: { S: 'step' } },
      ],
      NOW,
      ['t'],
    );
    expect(summary).toMatchObject({
      records: 5,
      byStatus: { COMPLETED: 1, IN_PROGRESS: 3, RELEASED: 1 },
      stuckInProgress: 2,
      stuckExamples: ['job#b', 'job#e'],
      inProgressLeased: 1,
      latestLeaseExpiryMs: NOW + 4_000,
    });
  });

  it('waits for a lease still running at the end to pass, then scans again', async () => {
    let clock = NOW;
    const scans: number[] = [];
    const client = {
      send: async () => {
        scans.push(clock);
        // First scan: leased for 3 more seconds; second scan: the same record, its lease passed.
        return { Items: [record('job#x', 'IN_PROGRESS', NOW + 3_000)] };
      },
    } as unknown as DynamoDBClient;
    const summary = await finalIdempotencyScan(client, ['t'], {
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
    });
    expect(scans).toEqual([NOW, NOW + 4_000]);
    expect(summary).toMatchObject({ stuckInProgress: 1, inProgressLeased: 0 });
  });

  it('fails the run on a stuck record, passes it without one, skips it when the deadline came first', () => {
    const stuck = summariseIdempotencyRecords([record('job#b', 'IN_PROGRESS', NOW - 1)], NOW);
    const clean = summariseIdempotencyRecords([record('job#a', 'COMPLETED', NOW - 1)], NOW);
    expect(invariant(facts({ idempotency: stuck }), 'idempotency records IN_PROGRESS')).toMatchObject({
      ok: false,
      actual: '1 (job#b)',
    });
    expect(buildReport(facts({ idempotency: stuck }))).toMatchObject({ ok: false, failed: true });
    expect(invariant(facts({ idempotency: clean }), 'idempotency records IN_PROGRESS')).toMatchObject({
      ok: true,
      actual: '0 of 1 records',
    });
    const late = buildReport(facts({ idempotency: stuck, timedOut: true }));
    expect(late.invariants.find((i) => i.name.startsWith('idempotency records'))?.skipped).toMatch(
      /deadline/,
    );
    expect(late.failed).toBe(false);
    expect(renderReport(buildReport(facts({ idempotency: stuck })))).toMatch(
      /FAIL {2}idempotency records IN_PROGRESS past their lease/,
    );
    // Without a scan there is no such line.
    expect(invariant(facts(), 'idempotency records IN_PROGRESS')).toBeUndefined();
  });
});

describe('dead letters with evidence', () => {
  const withEvidence = {
    queue: 'payments',
    errorName: 'ExternalApiError',
    errorReason: 'HTTP 400',
    attempts: 1,
    expectedBecause: 'injected 400',
  };

  it('fails the run on a dead letter without the worker evidence (a redrive-policy move), when required', () => {
    const bare = { queue: 'payments', jobKey: 'payments.capture:b-1' };
    const required = facts({ requireDeadLetterEvidence: true, deadLetters: [withEvidence, bare] });
    expect(invariant(required, 'dead letters without evidence')).toMatchObject({ ok: false, actual: '1' });
    expect(buildReport(required).deadLetters.withoutEvidence).toBe(1);
    expect(buildReport(required).failed).toBe(true);
    const good = facts({ requireDeadLetterEvidence: true, deadLetters: [withEvidence] });
    expect(invariant(good, 'dead letters without evidence')).toMatchObject({ ok: true, actual: '0' });
    expect(invariant(facts({ deadLetters: [bare] }), 'dead letters without evidence')).toBeUndefined();
  });
});

describe('soak figures', () => {
  it('reports p99 latency next to p50 / p95, and sent = completed + dead-lettered', () => {
    const jobs = Array.from({ length: 100 }, (_, i) => job(`j${i}`, { completedAtMs: NOW + (i + 1) * 10 }));
    const report = buildReport(facts({ jobs: [...jobs, job('dl', { state: 'dead-lettered' })] }));
    expect(report.latencyP99Ms).toBe(990);
    const text = renderReport(report);
    expect(text).toContain('p50 500 ms, p95 950 ms, p99 990 ms, max 1000 ms');
    expect(text).toContain(
      'Jobs: 101 (101 sent by the workload, 0 enqueued by jobs) = 100 completed + 1 dead-lettered',
    );
  });
});

describe('soak preset', () => {
  it('is 10,000 jobs by default; --jobs scales the users', () => {
    expect(jobsOf(SOAK_PRESET.users, SOAK_PRESET.bookingsPerUser)).toBe(10_000);
    expect(usersFor({ users: 500, jobs: 1_000, bookingsPerUser: 4 }, 10_000)).toBe(50);
    expect(usersFor({ users: 500, jobs: 5, bookingsPerUser: 4 }, 10_000)).toBe(1);
    expect(usersFor({ users: 500, jobs: 10_000_000, bookingsPerUser: 4 }, 10_000)).toBe(10_000);
    expect(usersFor({ users: 7, bookingsPerUser: 4 }, 10_000)).toBe(7);
  });

  it("scales the soak's deliberate bad jobs with the run, keeps given counts and npm start's as they are", () => {
    const soak = { outOfStock: 20, malformed: 30, duplicates: 50 };
    const none = () => false;
    expect(deliberateCounts(soak, { users: 50, bookingsPerUser: 4 }, SOAK_PRESET, none)).toEqual({
      outOfStock: 2,
      malformed: 3,
      duplicates: 5,
    });
    expect(deliberateCounts(soak, { users: 1, bookingsPerUser: 4 }, SOAK_PRESET, none)).toEqual({
      outOfStock: 1,
      malformed: 1,
      duplicates: 1,
    });
    expect(
      deliberateCounts(soak, { users: 50, bookingsPerUser: 4 }, SOAK_PRESET, (c) => c === 'malformed'),
    ).toMatchObject({ malformed: 30 });
    expect(
      deliberateCounts(
        { outOfStock: 2, malformed: 3, duplicates: 5 },
        { users: 10, bookingsPerUser: 3 },
        START_PRESET,
        none,
      ),
    ).toEqual({ outOfStock: 2, malformed: 3, duplicates: 5 });
  });

  it('turns the two AWS shares into valid rates of every kind, and none at all when both are 0', () => {
    const rates = awsFaultRatesFor(SOAK_PRESET.dynamodbFaultRate, SOAK_PRESET.sqsFaultRate);
    expect(rates).toBeDefined();
    for (const kind of AWS_FAULT_KINDS) expect(rates?.[kind]).toBeGreaterThan(0);
    expect(() => resolveAwsFaultRates(rates)).not.toThrow();
    expect(() => resolveAwsFaultRates(awsFaultRatesFor(1, 1))).not.toThrow();
    expect(awsFaultRatesFor(0, 0)).toBeUndefined();
    expect(START_PRESET).toMatchObject({
      dynamodbFaultRate: 0,
      sqsFaultRate: 0,
      killRate: 0,
      overrunRate: 0,
    });
  });

  it('runs holds and the nightly run in both presets; the soak also delivers some Scheduler firings twice', () => {
    for (const preset of [START_PRESET, SOAK_PRESET]) {
      expect(preset.holds).toBeGreaterThanOrEqual(4);
      expect(preset.nightlyBacklog).toBeGreaterThan(0);
      // Seconds, not minutes: the holds expire during the run.
      expect(preset.holdDelayMs).toBeLessThan(15_000);
    }
    expect(SOAK_PRESET.schedulerDuplicateDeliveryRate).toBeGreaterThan(0);
  });
});
