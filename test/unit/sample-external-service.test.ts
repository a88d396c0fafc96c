import { afterEach, describe, expect, it } from 'vitest';
import {
  type ExternalService,
  type ExternalServiceOptions,
  NO_FAULTS,
  pickFault,
  resolveFaultRates,
  resolveTenantRateLimit,
  seededUniform,
  startExternalService,
} from '../../lib/sample/external-service.ts';

let service: ExternalService | undefined;

async function start(options: ExternalServiceOptions = {}): Promise<ExternalService> {
  service = await startExternalService({ latencyMs: { min: 0, max: 0 }, ...options });
  return service;
}

afterEach(async () => {
  await service?.close();
  service = undefined;
});

const payment = { bookingId: 'b1', userId: 'u1', amountCents: 1200 };

async function post(
  svc: ExternalService,
  path: string,
  body: unknown,
  key?: string,
  signal?: AbortSignal,
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(`${svc.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify(body),
    signal,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

describe('fake external service: idempotency', () => {
  it('answers a repeated key with the stored response and performs the side effect once', async () => {
    const svc = await start();
    const first = await post(svc, '/payments', payment, 'k1');
    const second = await post(svc, '/payments', payment, 'k1');
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const stats = svc.stats();
    expect(stats.sideEffects).toBe(1);
    expect(stats.sideEffectsByKey).toEqual({ 'payment:k1': 1 });
    expect(stats.sideEffectsByReference).toEqual({ 'payment:b1': 1 });
    expect(stats.replays).toBe(1);
  });

  it('refuses a key reused with another payload (422) and performs nothing', async () => {
    const svc = await start();
    await post(svc, '/payments', payment, 'k1');
    const other = await post(svc, '/payments', { ...payment, amountCents: 1 }, 'k1');
    expect(other.status).toBe(422);
    expect(svc.stats().sideEffects).toBe(1);
  });

  it('counts a duplicate side effect per reference when two keys are used for one booking', async () => {
    const svc = await start();
    await post(svc, '/payments', payment, 'k1');
    await post(svc, '/payments', payment, 'k2');
    const stats = svc.stats();
    expect(stats.sideEffectsByKey).toEqual({ 'payment:k1': 1, 'payment:k2': 1 });
    expect(stats.sideEffectsByReference).toEqual({ 'payment:b1': 2 });
  });

  it('with idempotency switched off, a repeated key performs the side effect again', async () => {
    const svc = await start({ honourIdempotencyKey: false });
    await post(svc, '/emails', { bookingId: 'b1', to: 'a@example.com', template: 't' }, 'k1');
    await post(svc, '/emails', { bookingId: 'b1', to: 'a@example.com', template: 't' }, 'k1');
    expect(svc.stats().sideEffectsByKey).toEqual({ 'email:k1': 2 });
  });

  it('rejects malformed bodies and unknown paths without a side effect', async () => {
    const svc = await start();
    expect((await post(svc, '/payments', { bookingId: 'b1' }, 'k')).status).toBe(400);
    expect((await post(svc, '/nope', payment, 'k')).status).toBe(404);
    expect(svc.stats().sideEffects).toBe(0);
  });
});

describe('fake external service: fault injection', () => {
  it('throttles with 429 and Retry-After, performing nothing', async () => {
    const svc = await start({ faults: { throttle: 1 }, retryAfterSeconds: 2 });
    const res = await post(svc, '/invoices', { bookingId: 'b1', userId: 'u1', sku: 's', quantity: 1 }, 'k');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(svc.stats()).toMatchObject({ sideEffects: 0, faults: { throttle: 1 }, failuresInjected: 1 });
  });

  it('answers 503 and 400 when those faults are drawn, performing nothing', async () => {
    const svc = await start({ faults: { unavailable: 1 } });
    expect((await post(svc, '/payments', payment, 'a')).status).toBe(503);
    svc.setFaults({ badRequest: 1 });
    expect((await post(svc, '/payments', payment, 'b')).status).toBe(400);
    const stats = svc.stats();
    expect(stats.sideEffects).toBe(0);
    expect(stats.faultsByReference).toEqual({ 'payment:b1': ['unavailable', 'badRequest'] });
  });

  it('a timeout performs the side effect and hangs; the retry with the same key gets the stored answer', async () => {
    const svc = await start({ faults: { timeout: 1 }, hangMs: 2_000 });
    await expect(post(svc, '/payments', payment, 'k', AbortSignal.timeout(150))).rejects.toThrow();
    expect(svc.stats().sideEffects).toBe(1);
    svc.setFaults(NO_FAULTS);
    const retry = await post(svc, '/payments', payment, 'k');
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(svc.stats().sideEffectsByKey).toEqual({ 'payment:k': 1 });
  });

  it('a slow response is delayed but succeeds', async () => {
    const svc = await start({ faults: { slow: 1 }, slowMs: 120 });
    const t0 = performance.now();
    const res = await post(svc, '/payments', payment, 'k');
    expect(res.status).toBe(201);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(100);
    expect(svc.stats().faults.slow).toBe(1);
  });

  it('injects faults at about the configured rates, the same ones for the same seed', async () => {
    const rates = resolveFaultRates({ timeout: 0.05, throttle: 0.1, unavailable: 0.05, badRequest: 0.02 });
    const draw = (seed: number) =>
      Array.from({ length: 4000 }, (_, i) => pickFault(seededUniform(seed, `key-${i}`, 1, 'fault'), rates));
    const a = draw(7);
    expect(draw(7)).toEqual(a);
    expect(draw(8)).not.toEqual(a);
    const share = (kind: string) => a.filter((f) => f === kind).length / a.length;
    expect(share('throttle')).toBeGreaterThan(0.08);
    expect(share('throttle')).toBeLessThan(0.12);
    expect(share('timeout')).toBeGreaterThan(0.035);
    expect(share('timeout')).toBeLessThan(0.065);
    expect(share('badRequest')).toBeGreaterThan(0.01);
    expect(share('badRequest')).toBeLessThan(0.03);
    expect(a.filter((f) => f === undefined).length / a.length).toBeGreaterThan(0.75);
  });

  it('draws again on every request of a key, so a retry can pass', async () => {
    const svc = await start({ faults: { unavailable: 0.5 }, seed: 3 });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await post(svc, '/payments', payment, 'same')).status);
    expect(statuses).toContain(503);
    expect(statuses).toContain(201);
    expect(svc.stats().sideEffects).toBe(1);
  });

  it('refuses rates outside [0, 1] or adding up to more than 1, naming each problem', () => {
    expect(() => resolveFaultRates({ timeout: -0.1 })).toThrow(/timeout rate/);
    expect(() => resolveFaultRates({ throttle: 0.7, unavailable: 0.6 })).toThrow(/add up to 1.3/);
    expect(resolveFaultRates({ slow: 0.2 })).toEqual({ ...NO_FAULTS, slow: 0.2 });
  });
});

describe('fake external service: rate limit per tenant (opt-in)', () => {
  const paymentOf = (userId: string, bookingId: string) => ({ bookingId, userId, amountCents: 100 });

  it('answers 429 with Retry-After above the burst of one tenant, does nothing for it, and counts it apart from faults', async () => {
    // A refill so slow that no token comes back during the test: the third request finds none.
    const svc = await start({ tenantRateLimit: { requestsPerSecond: 0.001, burst: 2 } });
    const answers = [
      await post(svc, '/payments', paymentOf('u1', 'b1'), 'k1'),
      await post(svc, '/payments', paymentOf('u1', 'b2'), 'k2'),
      await post(svc, '/payments', paymentOf('u1', 'b3'), 'k3'),
    ];
    expect(answers.map((a) => a.status)).toEqual([201, 201, 429]);
    expect(Number(answers[2]?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const stats = svc.stats();
    expect(stats.sideEffectsByReference).toEqual({ 'payment:b1': 1, 'payment:b2': 1 });
    expect(stats.rateLimited).toBe(1);
    expect(stats.rateLimitedByTenant).toEqual({ u1: 1 });
    expect(stats.faults).toEqual(NO_FAULTS);
  });

  it('keeps tenants apart: one tenant over its limit does not hold back another (emails by recipient)', async () => {
    const svc = await start({ tenantRateLimit: { requestsPerSecond: 0.001, burst: 1 } });
    const email = (to: string, bookingId: string) => ({ bookingId, to, template: 'confirmed' });
    expect((await post(svc, '/emails', email('a@example.com', 'b1'), 'e1')).status).toBe(201);
    expect((await post(svc, '/emails', email('a@example.com', 'b2'), 'e2')).status).toBe(429);
    expect((await post(svc, '/emails', email('b@example.com', 'b3'), 'e3')).status).toBe(201);
    expect(
      (await post(svc, '/invoices', { bookingId: 'b4', userId: 'u9', sku: 's', quantity: 1 }, 'i1')).status,
    ).toBe(201);
    expect(svc.stats().rateLimitedByTenant).toEqual({ 'a@example.com': 1 });
  });

  it('has no limit by default', async () => {
    const svc = await start();
    for (let i = 0; i < 20; i++)
      expect((await post(svc, '/payments', paymentOf('u1', `b${i}`), `k${i}`)).status).toBe(201);
    expect(svc.stats().rateLimited).toBe(0);
  });

  it.each([
    [{ requestsPerSecond: 0 }, /requestsPerSecond must be a number > 0, got 0/],
    [{ requestsPerSecond: 5, burst: 0 }, /burst must be an integer >= 1, got 0/],
    [{ requestsPerSecond: 5, burst: 1.5 }, /burst must be an integer >= 1, got 1.5/],
  ])('refuses the limit %o', (tenantRateLimit, message) => {
    expect(() => resolveTenantRateLimit(tenantRateLimit)).toThrow(message);
  });

  it('defaults the burst to the rate rounded up', () => {
    expect(resolveTenantRateLimit({ requestsPerSecond: 2.5 })).toEqual({ requestsPerSecond: 2.5, burst: 3 });
  });
});
