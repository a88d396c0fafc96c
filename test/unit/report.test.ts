import { describe, expect, it } from 'vitest';
import type { OrderLogEntry } from '../../lib/sample/domain.ts';
import {
  buildReport,
  findOrderViolations,
  type JobOutcome,
  percentile,
  type ReportFacts,
  renderReport,
} from '../../lib/sample/report/index.ts';

const T0 = 1_700_000_000_000;

function job(overrides: Partial<JobOutcome> & Pick<JobOutcome, 'key'>): JobOutcome {
  return {
    type: 'payments.capture',
    queue: 'payments',
    origin: 'sent',
    state: 'completed',
    startedAtMs: T0,
    completedAtMs: T0 + 100,
    attempts: 1,
    ...overrides,
  };
}

function entry(bookingId: string, ordinal: number, step: OrderLogEntry['step']): OrderLogEntry {
  return { bookingId, ordinal, step, atMs: T0, attempt: 1 };
}

function facts(overrides: Partial<ReportFacts> = {}): ReportFacts {
  return {
    startedAtMs: T0,
    finishedAtMs: T0 + 2_000,
    bootMs: 500,
    timedOut: false,
    jobs: [
      job({ key: 'capture:b1', sideEffectReference: 'payment:b1' }),
      job({ key: 'capture:b2', sideEffectReference: 'payment:b2', completedAtMs: T0 + 1_000, attempts: 3 }),
    ],
    deadLetters: [],
    orderLogs: [
      {
        userId: 'u1',
        entries: [
          entry('b1', 1, 'reserve'),
          entry('b2', 2, 'reserve'),
          entry('b1', 1, 'confirm'),
          entry('b2', 2, 'confirm'),
        ],
      },
    ],
    sideEffects: {
      byKey: { 'payment:k1': 1, 'payment:k2': 1 },
      byReference: { 'payment:b1': 1, 'payment:b2': 1 },
    },
    faultsInjected: { throttle: 2, timeout: 1, slow: 0 },
    duplicatesAbsorbed: 4,
    ...overrides,
  };
}

const invariant = (report: ReturnType<typeof buildReport>, prefix: string) =>
  report.invariants.find((i) => i.name.startsWith(prefix));

describe('buildReport', () => {
  it("fails when the workers' JobDeadLettered metric counts fewer dead letters than the run saw (a crash lost a count)", () => {
    const dead = [job({ key: 'a', state: 'dead-lettered' }), job({ key: 'b', state: 'dead-lettered' })];
    const of = (metric: number) =>
      invariant(
        buildReport(
          facts({ jobs: dead, requireDeadLetterEvidence: true, workerMetrics: { JobDeadLettered: metric } }),
        ),
        "dead-lettered jobs the workers' JobDeadLettered metric did not count",
      );
    expect(of(1)).toMatchObject({ ok: false, actual: '1', severity: 'invariant' });
    expect(of(2)).toMatchObject({ ok: true, actual: '0' });
    // A job dead-lettered twice (its first DLQ send's response lost) may be counted twice.
    expect(of(3)).toMatchObject({ ok: true });
    // Not checked without the workers' metrics or when dead letters need no evidence (moto's redrive).
    expect(
      invariant(
        buildReport(facts({ jobs: dead, requireDeadLetterEvidence: true })),
        'dead-lettered jobs the',
      ),
    ).toBeUndefined();
  });

  it('passes a clean run and counts jobs, retries, faults, latency and throughput', () => {
    const report = buildReport(facts());
    expect(report.ok).toBe(true);
    expect(report.jobs).toMatchObject({
      sent: 2,
      enqueued: 0,
      total: 2,
      completed: 2,
      deadLettered: 0,
      lost: 0,
    });
    expect(report.jobs.retries).toBe(2);
    expect(report.jobs.retriedJobs).toBe(1);
    expect(report.faultsInjected.total).toBe(3);
    expect(report.latency).toEqual({ count: 2, p50Ms: 100, p95Ms: 1_000, maxMs: 1_000 });
    // 2 completions over the window from the first send to the last completion (1 s).
    expect(report.throughputPerSecond).toBeCloseTo(2);
    expect(report.workloadMs).toBe(2_000);
    expect(report.wallTimeMs).toBe(2_500);
    expect(report.duplicatesAbsorbed).toBe(4);
  });

  it('fails on a lost job and names it', () => {
    const report = buildReport(
      facts({ jobs: [...facts().jobs, job({ key: 'email:b9', state: 'lost', completedAtMs: undefined })] }),
    );
    expect(report.ok).toBe(false);
    expect(report.jobs.lost).toBe(1);
    expect(report.jobs.lostExamples).toEqual(['email:b9']);
    expect(invariant(report, 'jobs lost')).toMatchObject({ ok: false, actual: '1 (email:b9)' });
  });

  it('fails when a key has two side effects', () => {
    const report = buildReport(
      facts({
        sideEffects: {
          byKey: { 'payment:k1': 2, 'payment:k2': 1 },
          byReference: { 'payment:b1': 1, 'payment:b2': 1 },
        },
      }),
    );
    expect(report.ok).toBe(false);
    expect(report.sideEffects.maxPerKey).toBe(2);
    expect(report.sideEffects.keysOverOne).toEqual(['payment:k1 ×2']);
  });

  it('fails when a completed job has no side effect or two under different keys', () => {
    const missing = buildReport(
      facts({ sideEffects: { byKey: { 'payment:k2': 1 }, byReference: { 'payment:b2': 1 } } }),
    );
    expect(missing.ok).toBe(false);
    expect(missing.sideEffects.missing).toEqual(['capture:b1']);
    const twice = buildReport(
      facts({
        sideEffects: { byKey: { a: 1, b: 1, c: 1 }, byReference: { 'payment:b1': 2, 'payment:b2': 1 } },
      }),
    );
    expect(twice.ok).toBe(false);
    expect(twice.sideEffects.duplicated).toEqual(['capture:b1 ×2']);
  });

  it('does not ask a dead-lettered job for its side effect', () => {
    const report = buildReport(
      facts({
        jobs: [
          job({ key: 'capture:b3', state: 'dead-lettered', sideEffectReference: 'payment:b3', attempts: 1 }),
        ],
        deadLetters: [
          {
            queue: 'payments',
            errorName: 'ExternalApiError',
            errorReason: 'HTTP 400',
            expectedBecause: 'injected 400',
          },
        ],
        sideEffects: { byKey: {}, byReference: {} },
      }),
    );
    expect(report.ok).toBe(true);
    expect(report.jobs.deadLettered).toBe(1);
  });

  it('groups dead letters by cause and warns about an unexplained one', () => {
    const report = buildReport(
      facts({
        deadLetters: [
          {
            queue: 'booking',
            errorName: 'OutOfStockError',
            errorReason: 'OutOfStockError',
            expectedBecause: 'out of stock',
          },
          {
            queue: 'booking',
            errorName: 'OutOfStockError',
            errorReason: 'OutOfStockError',
            expectedBecause: 'out of stock',
          },
          {
            queue: 'payments',
            errorName: 'EnvelopeError',
            errorReason: 'EnvelopeError',
            expectedBecause: 'malformed',
          },
          {
            queue: 'payments',
            errorName: 'ExternalApiError',
            errorReason: 'HTTP 503',
            errorMessage: `/payments answered 503:\n${'x'.repeat(100)}`,
          },
        ],
      }),
    );
    expect(report.deadLetters.byCause).toEqual([
      { cause: 'OutOfStockError', count: 2, expected: 2 },
      { cause: 'EnvelopeError', count: 1, expected: 1 },
      {
        cause: 'ExternalApiError (HTTP 503)',
        count: 1,
        expected: 0,
        example: `/payments answered 503: ${'x'.repeat(47)}…`,
      },
    ]);
    expect(report.deadLetters.unexplained).toBe(1);
    // A warning, not an invariant: the system retried and kept the evidence.
    expect(report.ok).toBe(true);
    expect(invariant(report, 'dead letters without')).toMatchObject({ ok: false, severity: 'warning' });
    expect(renderReport(report)).toMatch(/WARN {2}dead letters without an injected or deliberate cause/);
  });

  it('counts a second DLQ message of one job as a copy, so the messages are not read as jobs', () => {
    const failing = (jobKey: string) => ({
      queue: 'billing',
      errorName: 'PermanentError',
      errorReason: 'HTTP 400',
      jobKey,
      expectedBecause: 'failing child',
    });
    const report = buildReport(
      facts({
        deadLetters: [failing('child:a'), failing('child:b'), failing('child:a'), { queue: 'payments' }],
      }),
    );
    expect(report.deadLetters.total).toBe(4);
    expect(report.deadLetters.copies).toBe(1);
    expect(renderReport(report)).toContain(
      'Dead-lettered by cause (4 messages, 3 jobs: 1 a second DLQ message of one job',
    );
    expect(renderReport(buildReport(facts({ deadLetters: [failing('child:a')] })))).toContain(
      'Dead-lettered by cause (1):',
    );
  });

  it('fails on a per-user order violation', () => {
    const report = buildReport(
      facts({
        orderLogs: [{ userId: 'u1', entries: [entry('b2', 2, 'reserve'), entry('b1', 1, 'reserve')] }],
      }),
    );
    expect(report.ok).toBe(false);
    expect(report.order.violations).toHaveLength(1);
    expect(invariant(report, 'per-user order')).toMatchObject({ ok: false, actual: '1' });
  });

  it('reports zero throughput and no latency when nothing completed', () => {
    const report = buildReport(facts({ jobs: [] }));
    expect(report.throughputPerSecond).toBe(0);
    expect(report.latency).toEqual({ count: 0, p50Ms: undefined, p95Ms: undefined, maxMs: undefined });
  });
});

describe('findOrderViolations', () => {
  it('accepts interleaved steps as long as each step sees bookings in order', () => {
    expect(
      findOrderViolations([
        {
          userId: 'u',
          entries: [
            entry('a', 1, 'reserve'),
            entry('a', 1, 'confirm'),
            entry('b', 2, 'reserve'),
            entry('a', 1, 'invoice'),
            entry('b', 2, 'confirm'),
            entry('b', 2, 'invoice'),
          ],
        },
      ]),
    ).toEqual([]);
  });

  it('accepts gaps (a dead-lettered booking skips its later steps)', () => {
    expect(
      findOrderViolations([
        {
          userId: 'u',
          entries: [entry('a', 1, 'reserve'), entry('c', 3, 'reserve'), entry('c', 3, 'confirm')],
        },
      ]),
    ).toEqual([]);
  });

  it('flags a later booking overtaken by an earlier one within a step, per user', () => {
    const violations = findOrderViolations([
      { userId: 'u1', entries: [entry('a', 1, 'confirm'), entry('a', 1, 'reserve')] },
      { userId: 'u2', entries: [entry('b', 2, 'reserve'), entry('a', 1, 'reserve')] },
    ]);
    expect(violations.map((v) => v.userId)).toEqual(['u1', 'u1', 'u2']);
    expect(violations[2]?.description).toContain('reserve of booking #1 (a) after booking #2 (b)');
  });
});

describe('percentile', () => {
  it('uses the nearest rank', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 95)).toBe(95);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([], 50)).toBeUndefined();
  });
});

describe('renderReport', () => {
  it('shows the figures and a PASS line per invariant', () => {
    const text = renderReport(buildReport(facts()));
    expect(text).toContain('Jobs: 2 (2 sent by the workload, 0 enqueued by jobs)');
    expect(text).toContain('Duplicate deliveries absorbed: 4');
    expect(text).toContain('p50 100 ms, p95 1000 ms');
    expect(text).toContain('Faults injected: 3 (throttle 2, timeout 1)');
    expect(text.match(/^ {2}PASS/gm)).toHaveLength(5);
    expect(text).toContain('RESULT: all invariants hold');
    expect(text).not.toContain('Worker metrics');
  });

  it("shows the partner's per-tenant rate limit and its 429s when it had one, and keeps every invariant", () => {
    const report = buildReport(
      facts({ partnerRateLimit: { requestsPerSecond: 5, burst: 5, rejected: 42, tenantsLimited: 7 } }),
    );
    expect(report.partnerRateLimit).toEqual({
      requestsPerSecond: 5,
      burst: 5,
      rejected: 42,
      tenantsLimited: 7,
    });
    expect(report.ok).toBe(true);
    const text = renderReport(report);
    expect(text).toContain(
      'Partner API rate limit (5/s per tenant, burst 5): 42 requests answered 429 and retried, from 7 tenants',
    );
    expect(renderReport(buildReport(facts()))).not.toContain('Partner API rate limit');
  });

  it("shows the workers' metric sums next to the evidence when given", () => {
    const text = renderReport(buildReport(facts({ workerMetrics: { JobCompleted: 2, JobRetried: 2 } })));
    expect(text).toContain(
      'Worker metrics: JobCompleted 2, JobRetried 2, JobDeadLettered 0, JobDuplicateAbsorbed 0',
    );
  });

  it('marks a failing invariant and lists lost jobs', () => {
    const text = renderReport(buildReport(facts({ jobs: [job({ key: 'x', state: 'lost' })] })));
    expect(text).toMatch(/FAIL {2}jobs lost/);
    expect(text).toContain('Lost jobs: x');
    expect(text).toContain('RESULT: INVARIANT FAILED');
  });

  it('a run stopped by Ctrl-C says interrupted, not deadline reached, in the text and the JSON', () => {
    const pending = job({ key: 'email:b9', state: 'unfinished', completedAtMs: undefined });
    const report = buildReport(
      facts({ timedOut: true, interrupted: true, jobs: [...facts().jobs, pending] }),
    );
    expect(report).toMatchObject({ complete: false, failed: false, timedOut: true, interrupted: true });
    expect(invariant(report, 'jobs lost')?.skipped).toBe('interrupted (Ctrl-C), 1 jobs not finished');
    const text = renderReport(report, { timeoutSeconds: 180 });
    expect(text).toMatch(/not finished \(interrupted\) +1/);
    expect(text).toContain('INTERRUPTED (Ctrl-C)');
    expect(text).toContain('RESULT: not finished: interrupted (Ctrl-C) with 1 jobs still queued/in flight');
    expect(text).not.toMatch(/deadline|DEADLINE|--timeout-seconds/);
    expect(buildReport(facts()).interrupted).toBe(false);
  });

  it('reports jobs pending at the deadline as not finished, not lost: incomplete, no invariant failed', () => {
    const pending = job({ key: 'email:b9', state: 'unfinished', completedAtMs: undefined });
    const report = buildReport(facts({ timedOut: true, jobs: [...facts().jobs, pending] }));
    expect(report).toMatchObject({ ok: false, failed: false, complete: false });
    expect(report.jobs).toMatchObject({ lost: 0, unfinished: 1, lostExamples: [] });
    expect(report.jobs.byType['payments.capture']).toMatchObject({ unfinished: 1, lost: 0 });
    expect(invariant(report, 'jobs lost')).toMatchObject({ skipped: expect.any(String) });
    const text = renderReport(report, { timeoutSeconds: 3 });
    expect(text).toMatch(/not finished \(deadline reached\) +1/);
    expect(text).toMatch(/SKIP {2}jobs lost/);
    expect(text).not.toMatch(/FAIL/);
    expect(text).not.toContain('INVARIANT FAILED');
    expect(text).toContain(
      'RESULT: not finished: the deadline of 3 s (--timeout-seconds) was reached with 1 jobs still queued/in flight',
    );
    expect(text).toContain('Raise --timeout-seconds');
  });

  it('still fails a checked invariant in a run that did not finish', () => {
    const report = buildReport(
      facts({
        timedOut: true,
        sideEffects: { byKey: { k: 2 }, byReference: { 'payment:b1': 1, 'payment:b2': 1 } },
      }),
    );
    expect(report).toMatchObject({ ok: false, failed: true, complete: false });
    const text = renderReport(report);
    expect(text).toContain('RESULT: INVARIANT FAILED');
    expect(text).toContain('RESULT: not finished');
  });

  it('keeps lost = 0 an invariant of a run that drained', () => {
    const report = buildReport(facts());
    expect(report).toMatchObject({ ok: true, failed: false, complete: true });
    expect(report.jobs).toMatchObject({ lost: 0, unfinished: 0 });
    expect(invariant(report, 'jobs lost')).toMatchObject({ ok: true, actual: '0' });
    expect(renderReport(report)).not.toContain('not finished');
  });
});

describe('failure examples name the job and its chain', () => {
  it('each cause shows one dead-lettered job with its parent, root, correlation id and trace id', () => {
    const body = JSON.stringify({
      specversion: '1.0',
      id: 'e-1',
      source: '/sqs-jobs/booking',
      type: 'notifications.send-email',
      causationid: 'i-1',
      rootid: 'book-1',
      correlationid: 'order-42',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00',
    });
    const report = buildReport(
      facts({
        deadLetters: [
          {
            queue: 'notifications',
            errorName: 'PermanentError',
            errorReason: 'HTTP 400',
            errorMessage: 'bad request',
          },
          {
            queue: 'payments',
            errorName: 'EnvelopeError',
            errorReason: 'EnvelopeError',
            errorMessage: 'bad',
          },
        ],
        deadLetterMessages: [
          { body, attributes: { ErrorName: 'PermanentError', ErrorReason: 'HTTP 400' } },
          {
            body: '{"specversion":"1.0",',
            attributes: { ErrorName: 'EnvelopeError', ErrorReason: 'EnvelopeError' },
          },
        ],
      }),
    );
    const permanent = report.deadLetters.byCause.find((c) => c.cause === 'PermanentError (HTTP 400)');
    expect(permanent?.exampleJob).toEqual({
      jobType: 'notifications.send-email',
      jobId: 'e-1',
      parentJobId: 'i-1',
      rootJobId: 'book-1',
      correlationId: 'order-42',
      traceId: '0af7651916cd43dd8448eb211c80319c',
    });
    expect(report.deadLetters.byCause.find((c) => c.cause === 'EnvelopeError')?.exampleJob).toBeUndefined();
    const text = renderReport(report);
    expect(text).toMatch(
      /PermanentError \(HTTP 400\) +1 .*\n {6}job notifications\.send-email e-1, parent i-1, root book-1, correlation order-42, trace 0af7651916cd43dd8448eb211c80319c\n/,
    );
  });
});
