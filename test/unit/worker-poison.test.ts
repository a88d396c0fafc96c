/**
 * Poison is permanent (DESIGN.md; issue 22): what fails because of the message itself (its
 * idempotency key, the hash of its data, describing its failure) dead-letters it with evidence on
 * its first delivery; it is never taken for the idempotency store being unavailable, which
 * retries without counting an attempt and so cycles until the queue's maxReceiveCount.
 */
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { PermanentError } from '../../lib/core/errors.ts';
import { defineJob, type JobIdempotencyOptions } from '../../lib/runtime/job.ts';
import { FakeGuard } from '../factories/fake-guard.ts';
import { jobBody, sqsRecord } from '../factories/sqs.ts';
import { workerHarness } from '../factories/worker.ts';

/** Data carrying this marker makes the payload hash throw (any failure of hashing, not one input). */
const HASH_FAILS = '__hash-fails__';

vi.mock('../../lib/core/canonical-json.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../lib/core/canonical-json.ts')>();
  return {
    ...actual,
    payloadHash: (value: unknown) => {
      if (typeof value === 'object' && value !== null && HASH_FAILS in value) {
        throw new RangeError('Maximum call stack size exceeded');
      }
      return actual.payloadHash(value);
    },
  };
});

function anyDataJob(run: () => Promise<unknown>, idempotency?: JobIdempotencyOptions<unknown>) {
  return defineJob({
    type: 'poison.any',
    queue: 'jobs',
    schema: z.unknown(),
    retry: { maxAttempts: 5 },
    ...(idempotency ? { idempotency } : {}),
    run,
  });
}

/** An envelope body around `dataText` (JSON text written by hand: JSON.stringify overflows on deep data). */
function bodyWithDataText(dataText: string, id = 'job-1'): string {
  const head = JSON.stringify({
    specversion: '1.0',
    id,
    source: '/tests',
    type: 'poison.any',
    time: '2026-12-01T00:00:00.000Z',
    datacontenttype: 'application/json',
  });
  return `${head.slice(0, -1)},"data":${dataText}}`;
}

const attribute = (
  sent: { MessageAttributes?: Record<string, { StringValue?: string }> } | undefined,
  name: string,
) => sent?.MessageAttributes?.[name]?.StringValue;

describe("the job's identity is computed before the store is asked", () => {
  it('runs a job whose data is nested 10,000 levels deep (the payload hash no longer overflows)', async () => {
    const guard = new FakeGuard();
    let runs = 0;
    const h = workerHarness({ idempotency: guard, jobs: [anyDataJob(async () => void runs++)] });
    const depth = 10_000;
    const record = sqsRecord({ body: bodyWithDataText(`${'{"a":['.repeat(depth)}1${']}'.repeat(depth)}`) });
    const { response, logs } = await h.invoke([record]);
    expect(response.batchItemFailures).toEqual([]);
    expect(runs).toBe(1);
    expect(guard.begins[0]?.payloadHash).toMatch(/^[0-9a-f]{64}$/);
    expect(logs.filter((line) => line.reason === 'guard-unavailable' || line.level === 'ERROR')).toEqual([]);
  });

  it('dead-letters on the first delivery, with evidence, when hashing the data fails: no store outage, no cycling', async () => {
    const guard = new FakeGuard();
    let runs = 0;
    const h = workerHarness({ idempotency: guard, jobs: [anyDataJob(async () => void runs++)] });
    const record = sqsRecord({ body: jobBody('poison.any', { [HASH_FAILS]: true }) });
    const { response } = await h.invoke([record]);

    expect(response.batchItemFailures).toEqual([]);
    expect(runs).toBe(0);
    expect(guard.begins).toEqual([]);
    const [sent] = h.sqs.sentTo(h.dlqUrl);
    expect(sent?.MessageBody).toBe(record.body);
    expect(attribute(sent, 'ErrorName')).toBe('JobIdentityError');
    expect(attribute(sent, 'ErrorReason')).toBe('JobIdentityError');
    expect(attribute(sent, 'Attempts')).toBe('1');
    expect(attribute(sent, 'ErrorMessage')).toMatch(
      /payload hash of poison\.any could not be computed: .*RangeError/,
    );
    expect(attribute(sent, 'ErrorStack')).toMatch(/Caused by: RangeError: Maximum call stack size exceeded/);
    expect(attribute(sent, 'SourceMessageId')).toBe(record.messageId);
  });

  it.each([
    {
      name: 'throws',
      key: (): string => {
        throw new Error('data.customer is undefined');
      },
      message:
        /idempotency key of poison\.any could not be computed: idempotency\.key\(data\) threw Error: data\.customer is undefined/,
    },
    {
      name: 'returns an empty string',
      key: () => '',
      message: /must return a non-empty string, got an empty string/,
    },
    {
      name: 'returns no string',
      key: () => 42 as unknown as string,
      message: /must return a non-empty string, got number/,
    },
  ])(
    'dead-letters on the first delivery when the job key function $name, without asking the store',
    async ({ key, message }) => {
      const guard = new FakeGuard();
      let runs = 0;
      const h = workerHarness({ idempotency: guard, jobs: [anyDataJob(async () => void runs++, { key })] });
      const record = sqsRecord({ body: jobBody('poison.any', { orderId: 'o-1' }) });
      const { response } = await h.invoke([record]);

      expect(response.batchItemFailures).toEqual([]);
      expect(runs).toBe(0);
      expect(guard.begins).toEqual([]);
      const [sent] = h.sqs.sentTo(h.dlqUrl);
      expect(attribute(sent, 'ErrorName')).toBe('JobIdentityError');
      expect(attribute(sent, 'ErrorMessage')).toMatch(message);
    },
  );
});

describe('a failure that cannot be described is dead-lettered all the same', () => {
  it('sends the dead letter when reading the error throws, saying so in the evidence', async () => {
    const h = workerHarness({
      jobs: [
        anyDataJob(async () => {
          const error = new PermanentError('unreadable');
          Object.defineProperty(error, 'stack', {
            get() {
              throw new RangeError('Maximum call stack size exceeded');
            },
          });
          throw error;
        }),
      ],
    });
    const record = sqsRecord({ body: jobBody('poison.any', { orderId: 'o-1' }) });
    const { response, logs } = await h.invoke([record]);
    expect(response.batchItemFailures).toEqual([]);
    const [sent] = h.sqs.sentTo(h.dlqUrl);
    expect(sent?.MessageBody).toBe(record.body);
    expect(attribute(sent, 'ErrorName')).toBe('UndescribableError');
    expect(attribute(sent, 'ErrorMessage')).toMatch(/could not be described \(reading it threw RangeError/);
    expect(attribute(sent, 'ErrorReason')).toBe('PermanentError');
    expect(attribute(sent, 'SourceMessageId')).toBe(record.messageId);
    expect(h.sqs.sentTo(h.dlqUrl)).toHaveLength(1);
    // Its log line is written without the error it cannot describe, and says so.
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        message: 'job dead-lettered',
        logFailed: 'RangeError: Maximum call stack size exceeded',
      }),
    );
  });
});
