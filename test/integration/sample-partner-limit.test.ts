/**
 * The sample's own rate limit against the rate-limited fake partner, through the real worker on
 * the emulators (fauxqs + dynalite, the idempotency table holding the buckets): a burst of one
 * tenant's payment captures gets (near) no 429 with the limit on, and many without it
 * (`SAMPLE_RATE_LIMITS=off`, what `npm start -- --no-limits` sets). Each capture runs its side
 * effect exactly once either way.
 */
import type { Message } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createEnvelope } from '../../lib/core/envelope.ts';
import type { Booking, DomainRepository } from '../../lib/sample/domain.ts';
import { ExternalApi } from '../../lib/sample/external-api.ts';
import { type ExternalService, startExternalService } from '../../lib/sample/external-service.ts';
import { createSampleJobs } from '../../lib/sample/jobs.ts';
import { SAMPLE_PARTNER_RATE_LIMIT, SAMPLE_RATE_LIMITS_ENV } from '../../lib/sample/partner-limit.ts';
import type { EmulatedQueue } from '../factories/emulated-sqs.ts';
import { guardedWorker, useGuardedEmulators } from '../factories/guarded-emulators.ts';
import { lambdaContext, recordFromMessage, sqsEvent } from '../factories/sqs.ts';
import { captureOutput } from '../factories/worker.ts';

const env = useGuardedEmulators();
const TENANT = 'u-1';
const BURST = 8;

let service: ExternalService | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  await service?.close();
  service = undefined;
});

/** The bookings of one user in memory: what `payments.capture` reads and records. */
function memoryRepository() {
  const bookings = new Map<string, Booking>();
  for (let i = 1; i <= BURST; i++) {
    const bookingId = `b-1-${i}`;
    bookings.set(bookingId, {
      bookingId,
      userId: TENANT,
      sku: 'sku-01',
      quantity: 1,
      amountCents: 1_000 + i,
      ordinal: i,
      status: 'PENDING',
    });
  }
  const repository = {
    async getBooking(_userId: string, bookingId: string) {
      const booking = bookings.get(bookingId);
      if (!booking) throw new Error(`no booking ${bookingId}`);
      return booking;
    },
    async recordOnBooking(booking: Pick<Booking, 'bookingId'>, fields: Record<string, string | number>) {
      const current = bookings.get(booking.bookingId) as Booking;
      bookings.set(booking.bookingId, { ...current, ...fields });
    },
  } as unknown as DomainRepository;
  const captured = () => [...bookings.values()].filter((b) => b.paymentId !== undefined).length;
  return { repository, captured };
}

/** `run` names the test's jobs: the idempotency table is shared by the tests of this file. */
async function setUp(run: string) {
  service = await startExternalService({ tenantRateLimit: SAMPLE_PARTNER_RATE_LIMIT });
  const { queue, dlq } = await env.emulator.createQueuePair('payments', false);
  const { repository, captured } = memoryRepository();
  const api = new ExternalApi({ baseUrl: service.url });
  const jobs = createSampleJobs(() => ({ repository, api, now: Date.now }));
  // The wait's jitter at its low end (guardedWorker): a waiting job comes back when its token is due.
  const handler = guardedWorker(env, { queueName: 'payments', queue, dlq, jobs: [jobs.capturePayment] });
  for (let i = 1; i <= BURST; i++) {
    await env.emulator.send(
      queue,
      createEnvelope({
        type: jobs.capturePayment.type,
        source: '/test',
        id: `${run}-capture-b-1-${i}`,
        data: { userId: TENANT, bookingId: `b-1-${i}` },
      }),
    );
  }
  return { queue, dlq, handler, captured };
}

/** Receives until all `count` messages are in hand: one batch, run at once as Lambda would. */
async function receiveAll(queue: EmulatedQueue, count: number): Promise<Message[]> {
  const messages: Message[] = [];
  while (messages.length < count) messages.push(...(await env.emulator.receive(queue)));
  return messages;
}

describe("the sample's rate limit on the partner (burst of one tenant's captures)", () => {
  it('without the limit: one batch of the burst hits the partner at once and most calls get 429', async () => {
    vi.stubEnv(SAMPLE_RATE_LIMITS_ENV, 'off');
    const { queue, handler } = await setUp('unlimited');
    const messages = await receiveAll(queue, BURST);
    const { value: response } = await captureOutput(() =>
      handler(sqsEvent(messages.map((m) => recordFromMessage(m, queue.arn))), lambdaContext(60_000)),
    );
    const stats = (service as ExternalService).stats();
    // The partner's bucket holds 1 request: the rest of the burst is refused (retried later), but
    // for a token or two the partner refills while the batch's calls go out on a loaded machine.
    expect(stats.rateLimited).toBeGreaterThanOrEqual(BURST - 3);
    expect(response.batchItemFailures.length).toBe(stats.rateLimited);
    expect(stats.rateLimitedByTenant).toEqual({ [TENANT]: stats.rateLimited });
  });

  it('with the limit: the burst waits for tokens (no attempt spent) and the partner answers no 429', async () => {
    vi.stubEnv(SAMPLE_RATE_LIMITS_ENV, 'on');
    const { queue, dlq, handler, captured } = await setUp('limited');
    let deliveries = 0;
    let failures = 0;
    // Until every capture is recorded: waiting jobs come back as re-sent copies when due.
    while (captured() < BURST) {
      const { response, delivered } = await env.emulator.deliver(queue, handler);
      deliveries += delivered;
      failures += response.batchItemFailures.length;
    }
    const stats = (service as ExternalService).stats();
    // Near zero, not zero: our grants are 1.25 s apart where the partner needs 1 s, so a 429 needs a
    // call that reached the partner over 250 ms late behind one that did not (the first call of a
    // process sets up its connection): at most a couple on a loaded machine.
    expect(stats.rateLimited).toBeLessThanOrEqual(2);
    expect(stats.sideEffects).toBe(BURST);
    expect(Object.values(stats.sideEffectsByReference).every((n) => n === 1)).toBe(true);
    // The burst waited (more deliveries than jobs), without failing a run for it.
    expect(deliveries).toBeGreaterThan(BURST);
    expect(failures).toBeLessThanOrEqual(stats.rateLimited);
    expect(await env.emulator.receive(dlq)).toEqual([]);
  }, 120_000);
});
