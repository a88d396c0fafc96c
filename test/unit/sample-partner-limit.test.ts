/**
 * The sample's own rate limit on the partner (lib/sample/partner-limit.ts) and how the report
 * shows it (lib/sample/report/flow-control.ts): which jobs take it and with which key, the
 * throttling report on a 429, `--no-limits`, the report line and the 429 invariant on hand-made facts.
 */
import { describe, expect, it } from 'vitest';
import type { JobContext, RateLimitDefinition } from '../../lib/index.ts';
import { ExternalApiError } from '../../lib/sample/external-api.ts';
import { sampleJobs } from '../../lib/sample/jobs.ts';
import {
  callPartner,
  PARTNER_API_LIMIT,
  SAMPLE_PARTNER_RATE_LIMIT,
  SAMPLE_RATE_LIMITS_ENV,
  sampleLimitFacts,
} from '../../lib/sample/partner-limit.ts';
import { SOAK_PRESET, START_PRESET } from '../../lib/sample/presets.ts';
import { partner429Allowed } from '../../lib/sample/report/flow-control.ts';
import { buildReport, type ReportFacts, renderReport } from '../../lib/sample/report/index.ts';

/** A context that records the tokens taken and the throttling reports. */
function recordingContext() {
  const taken: { name: string; key: string | undefined }[] = [];
  const throttled: string[] = [];
  const warnings: string[] = [];
  const ctx = {
    async rateLimit(limit: RateLimitDefinition, options?: { key?: string }) {
      taken.push({ name: limit.name, key: options?.key });
      return {
        throttled: async () => {
          throttled.push(options?.key ?? '');
        },
      };
    },
    logger: { warn: (message: string) => warnings.push(message) },
  } as unknown as JobContext;
  return { ctx, taken, throttled, warnings };
}

const status = (code: number) =>
  new ExternalApiError(`/payments answered ${code}`, code, new Headers({ 'retry-after': '1' }), {});

describe('the sample jobs that call the partner take its rate limit', () => {
  it('is declared by capture, invoice and email (the calls to the partner), and by no other job', () => {
    const declaring = Object.values(sampleJobs)
      .filter((job) => (job.rateLimits ?? []).includes(PARTNER_API_LIMIT))
      .map((job) => job.type)
      .sort();
    expect(declaring).toEqual(['booking.issue-invoice', 'notifications.send-email', 'payments.capture']);
  });

  it('sits below the partner: a lower rate and no larger burst, adaptive with a floor', () => {
    expect(PARTNER_API_LIMIT.perSecond).toBeLessThan(SAMPLE_PARTNER_RATE_LIMIT.requestsPerSecond);
    expect(PARTNER_API_LIMIT.burst).toBeLessThanOrEqual(SAMPLE_PARTNER_RATE_LIMIT.burst);
    expect(PARTNER_API_LIMIT.adaptive?.minPerSecond).toBeGreaterThan(0);
    // Off by default in npm start (--partner-rate-limit 1 turns it on) and in the soak (its own fault mix).
    expect(START_PRESET.partnerRateLimit).toBeUndefined();
    expect(SOAK_PRESET.partnerRateLimit).toBeUndefined();
  });
});

/** The workers' environment with the sample's limit on (the run sets it with a partner limit). */
const ON = { [SAMPLE_RATE_LIMITS_ENV]: 'on' };

describe('callPartner', () => {
  it("takes a token keyed by the tenant before the call and returns the call's answer", async () => {
    const { ctx, taken, throttled } = recordingContext();
    const order: string[] = [];
    const answer = await callPartner(
      ctx,
      'u-7',
      async () => {
        order.push(`call after ${taken.length} token(s)`);
        return { paymentId: 'pay_1' };
      },
      ON,
    );
    expect(answer).toEqual({ paymentId: 'pay_1' });
    expect(taken).toEqual([{ name: PARTNER_API_LIMIT.name, key: 'u-7' }]);
    expect(order).toEqual(['call after 1 token(s)']);
    expect(throttled).toEqual([]);
  });

  it('reports throttling on a 429 and rethrows it (the job retries as before); not on other errors', async () => {
    const { ctx, throttled } = recordingContext();
    const tooMany = status(429);
    await expect(callPartner(ctx, 'u-7', () => Promise.reject(tooMany), ON)).rejects.toBe(tooMany);
    expect(throttled).toEqual(['u-7']);
    await expect(callPartner(ctx, 'u-8', () => Promise.reject(status(503)), ON)).rejects.toThrow('503');
    await expect(
      callPartner(ctx, 'u-9', () => Promise.reject(new Error('socket hang up')), ON),
    ).rejects.toThrow('socket hang up');
    expect(throttled).toEqual(['u-7']);
  });

  it('still throws the 429 when the throttling report fails, and logs that', async () => {
    const { ctx, warnings } = recordingContext();
    const failing = {
      ...ctx,
      rateLimit: async () => ({
        throttled: () => Promise.reject(new Error('DynamoDB unavailable')),
      }),
    } as unknown as JobContext;
    const tooMany = status(429);
    await expect(callPartner(failing, 'u-7', () => Promise.reject(tooMany), ON)).rejects.toBe(tooMany);
    expect(warnings).toEqual(['could not lower the partner rate limit after a 429']);
  });

  it(`takes no token without ${SAMPLE_RATE_LIMITS_ENV}=on (no partner limit, or npm start -- --no-limits)`, async () => {
    const { ctx, taken } = recordingContext();
    expect(await callPartner(ctx, 'u-7', async () => 'done', { [SAMPLE_RATE_LIMITS_ENV]: 'off' })).toBe(
      'done',
    );
    expect(await callPartner(ctx, 'u-7', async () => 'done', {})).toBe('done');
    expect(taken).toEqual([]);
  });
});

const T0 = 1_700_000_000_000;

function facts(overrides: Partial<ReportFacts> = {}): ReportFacts {
  return {
    startedAtMs: T0,
    finishedAtMs: T0 + 2_000,
    bootMs: 500,
    timedOut: false,
    jobs: [],
    deadLetters: [],
    orderLogs: [],
    sideEffects: { byKey: {}, byReference: {} },
    faultsInjected: {},
    duplicatesAbsorbed: 0,
    ...overrides,
  };
}

const partner = (rejected: number, requests: number) => ({
  partnerRateLimit: { requestsPerSecond: 1, burst: 1, rejected, tenantsLimited: 3, requests },
});
const INVARIANT = "partner 429s (its rate limit per tenant) with the sample's own limit on";

describe('the report: our limit, what it delayed, and the partner 429 invariant', () => {
  it('shows the limit on with the waits from the workers metrics, and the partner line with its requests', () => {
    const report = buildReport(
      facts({
        ...partner(2, 1_500),
        sampleLimit: sampleLimitFacts(true),
        workerMetrics: { JobLimitDelayed: 37, JobLimitWaitMs: 12_345 },
      }),
    );
    expect(report.flowControl).toEqual({
      limit: { on: true, name: 'sample-partner-api', perSecond: 0.8, burst: 1, minPerSecond: 0.2 },
      waitsOutsideRuns: 37,
      waitedInRunsMs: 12_345,
    });
    const text = renderReport(report);
    expect(text).toContain(
      'Partner API rate limit (1/s per tenant, burst 1): 2 of 1500 requests answered 429 and retried, from 3 tenants',
    );
    expect(text).toContain(
      "Sample's rate limit on the partner (sample-partner-api: 0.8/s per tenant, burst 1, adaptive down to 0.2/s after a 429): on; jobs delayed outside a run: 37 (JobLimitDelayed, no attempt spent); waited inside runs: 12.3 s (JobLimitWaitMs)",
    );
    expect(text).toMatch(
      /PASS {2}partner 429s .* 2 of 1500 requests .*expected <= 15: 1% of requests, at least 3/,
    );
    expect(report.ok).toBe(true);
  });

  it('fails the run when the 429s with our limit on pass 1% of the requests (at least 3 allowed)', () => {
    const of = (rejected: number, requests: number) =>
      buildReport(facts({ ...partner(rejected, requests), sampleLimit: sampleLimitFacts(true) }));
    expect(partner429Allowed(1_500)).toBe(15);
    expect(partner429Allowed(40)).toBe(3);
    expect(of(15, 1_500).ok).toBe(true);
    const failed = of(16, 1_500);
    expect(failed.ok).toBe(false);
    expect(failed.invariants.find((i) => i.name === INVARIANT)).toMatchObject({
      ok: false,
      severity: 'invariant',
      actual: '16 of 1500 requests',
    });
    expect(renderReport(failed)).toContain('RESULT: INVARIANT FAILED');
    expect(of(3, 40).ok).toBe(true);
    expect(of(4, 40).ok).toBe(false);
  });

  it('does not check the 429s with --no-limits (they are the comparison) or without a partner limit', () => {
    const off = buildReport(facts({ ...partner(400, 1_900), sampleLimit: sampleLimitFacts(false) }));
    expect(off.ok).toBe(true);
    expect(off.invariants.map((i) => i.name)).not.toContain(INVARIANT);
    expect(renderReport(off)).toContain(
      "Sample's rate limit on the partner (sample-partner-api: 0.8/s per tenant, burst 1, adaptive down to 0.2/s after a 429): OFF (--no-limits)",
    );
    const noPartner = buildReport(facts({ sampleLimit: sampleLimitFacts(true) }));
    expect(noPartner.invariants.map((i) => i.name)).not.toContain(INVARIANT);
    // Without the workers' metrics the waits are not measured, not 0.
    expect(renderReport(noPartner)).toContain('jobs delayed outside a run: not measured');
  });

  it('shows nothing about our limit when the facts do not know it (moto runs, older callers)', () => {
    const report = buildReport(facts());
    expect(report.flowControl).toBeUndefined();
    expect(renderReport(report)).not.toContain("Sample's rate limit");
  });
});
