import { afterEach, describe, expect, it } from 'vitest';
import { classifyError, PermanentError, TransientError } from '../../lib/core/errors.ts';
import { ExternalApi, ExternalApiError } from '../../lib/sample/external-api.ts';
import { type ExternalService, startExternalService } from '../../lib/sample/external-service.ts';
import { waitFor } from '../factories/wait-for.ts';

let service: ExternalService | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

const capture = { bookingId: 'b1', userId: 'u1', amountCents: 500 };

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

describe('ExternalApi against the fake service', () => {
  it('sends the idempotency key: a retry gets the same payment id and one side effect', async () => {
    service = await startExternalService({ latencyMs: { min: 0, max: 0 } });
    const api = new ExternalApi({ baseUrl: service.url });
    const a = await api.capturePayment(capture, { idempotencyKey: 'job-1/capture' });
    const b = await api.capturePayment(capture, { idempotencyKey: 'job-1/capture' });
    expect(b).toEqual(a);
    expect(service.stats().sideEffectsByKey).toEqual({ 'payment:job-1/capture': 1 });
  });

  it.each([
    ['throttle', { kind: 'transient', reason: 'HTTP 429', minDelayMs: 1000 }],
    ['unavailable', { kind: 'transient', reason: 'HTTP 503' }],
    ['badRequest', { kind: 'permanent', reason: 'HTTP 400' }],
  ] as const)('maps an injected %s to an error classifyError reads as %o', async (fault, expected) => {
    service = await startExternalService({ latencyMs: { min: 0, max: 0 }, faults: { [fault]: 1 } });
    const api = new ExternalApi({ baseUrl: service.url });
    const err = await failureOf(
      api.issueInvoice({ bookingId: 'b', userId: 'u', sku: 's', quantity: 1 }, { idempotencyKey: 'k' }),
    );
    expect(err).toBeInstanceOf(ExternalApiError);
    expect(classifyError(err)).toEqual(expected);
  });

  it('times out a hanging request (transient) while the job signal is still live', async () => {
    service = await startExternalService({
      latencyMs: { min: 0, max: 0 },
      faults: { timeout: 1 },
      hangMs: 2_000,
    });
    const api = new ExternalApi({ baseUrl: service.url, timeoutMs: 100 });
    const job = new AbortController();
    const err = await failureOf(
      api.sendEmail(
        { bookingId: 'b', to: 'x@example.com', template: 't' },
        { idempotencyKey: 'k', signal: job.signal },
      ),
    );
    expect((err as Error).name).toBe('TimeoutError');
    expect(classifyError(err).kind).toBe('transient');
  });

  it('stops when the job signal aborts first', async () => {
    service = await startExternalService({
      latencyMs: { min: 0, max: 0 },
      faults: { timeout: 1 },
      // Longer than the test may run: only the job signal (or the client timeout) can end the call.
      hangMs: 600_000,
    });
    const api = new ExternalApi({ baseUrl: service.url, timeoutMs: 300_000 });
    const job = new AbortController();
    // Aborted once the service hangs on the request (its side effect done), not after a guessed delay.
    const call = api.capturePayment(capture, { idempotencyKey: 'k', signal: job.signal });
    await waitFor(
      () => service?.stats().sideEffects ?? 0,
      (n) => n === 1,
    );
    job.abort();
    const err = await failureOf(call);
    expect((err as Error).name).toBe('AbortError');
    expect(classifyError(err).kind).toBe('transient');
  });

  it('reads 409 (key in progress) as transient and 422 (key reused) as permanent', async () => {
    const answer = (status: number) =>
      (async () => new Response(JSON.stringify({ error: 'x' }), { status })) as unknown as typeof fetch;
    const conflict = await failureOf(
      new ExternalApi({ baseUrl: 'http://x', fetch: answer(409) }).capturePayment(capture, {
        idempotencyKey: 'k',
      }),
    );
    expect(conflict).toBeInstanceOf(TransientError);
    const reused = await failureOf(
      new ExternalApi({ baseUrl: 'http://x', fetch: answer(422) }).capturePayment(capture, {
        idempotencyKey: 'k',
      }),
    );
    expect(reused).toBeInstanceOf(PermanentError);
  });

  it("reads the partner's per-tenant rate limit (429) as transient, retried after its Retry-After", async () => {
    service = await startExternalService({
      latencyMs: { min: 0, max: 0 },
      tenantRateLimit: { requestsPerSecond: 0.001, burst: 1 },
    });
    const api = new ExternalApi({ baseUrl: service.url });
    await api.capturePayment(capture, { idempotencyKey: 'k1' });
    const limited = await failureOf(
      api.capturePayment({ ...capture, bookingId: 'b2' }, { idempotencyKey: 'k2' }),
    );
    expect(limited).toBeInstanceOf(ExternalApiError);
    expect((limited as ExternalApiError).status).toBe(429);
    const classified = classifyError(limited);
    // One token per 1,000 s: the partner says to come back in 1,000 s, the retry waits at least that.
    expect(classified).toEqual({ kind: 'transient', reason: 'HTTP 429', minDelayMs: 1_000_000 });
    expect(service.stats().rateLimited).toBe(1);
  });

  it('a refused connection is transient', async () => {
    service = await startExternalService();
    const url = service.url;
    await service.close();
    service = undefined;
    const err = await failureOf(
      new ExternalApi({ baseUrl: url }).capturePayment(capture, { idempotencyKey: 'k' }),
    );
    expect(classifyError(err)).toMatchObject({ kind: 'transient', reason: 'ECONNREFUSED' });
  });
});
