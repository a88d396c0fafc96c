/**
 * `ctx.once` step values and job results that JSON would change (a `Map`, a `Date`, `NaN`), through
 * the worker with its default DynamoDB store on the embedded emulators: never handed to a retry
 * changed. The step's side effect is not repeated; the run that produced the value says so at WARN;
 * the retry that needs the value is dead-lettered with evidence naming the step, the kind and the path.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createEnvelope } from '../../lib/core/envelope.ts';
import { TransientError } from '../../lib/core/errors.ts';
import { jobRecordKey, stepRecordKey } from '../../lib/runtime/idempotency/keys.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record/index.ts';
import type { EmulatedQueue } from '../factories/emulated-sqs.ts';
import { guardedWorker, useGuardedEmulators } from '../factories/guarded-emulators.ts';

const env = useGuardedEmulators();

function worker(jobs: AnyJob[], queue: EmulatedQueue, dlq: EmulatedQueue) {
  const logger = new Logger({ logLevel: 'SILENT' });
  const warn = vi.spyOn(logger, 'warn');
  const handler = guardedWorker(env, { queueName: 'payments', queue, dlq, jobs, logger });
  return { handler, warnings: () => warn.mock.calls.map((call) => call as unknown[]) };
}

async function getItem(pk: string) {
  const out = await env.db.client.send(
    new GetItemCommand({ TableName: env.tableName, Key: { pk: { S: pk } }, ConsistentRead: true }),
  );
  return out.Item;
}

const schema = z.object({ paymentId: z.string() });
const JSON_RULE =
  'step values must be JSON values (objects, arrays, strings, finite numbers, booleans, null) so a retry reads back the same';

describe('once step values JSON would change (the finding: Map, Date, NaN read back as {}, a string, null)', () => {
  for (const [kind, make, path] of [
    ['a Map', () => ({ items: new Map([['a', 1]]) }), 'value.items'],
    ['a Date', () => new Date('2026-11-29T08:00:00.000Z'), 'value'],
    ['NaN', () => ({ total: Number.NaN }), 'value.total'],
  ] as const) {
    it(`${kind}: not handed to the retry changed; the step is not run again; WARN on the first run, DLQ evidence on the retry`, async () => {
      const queue = await env.emulator.createQueue('steps', false);
      const dlq = await env.emulator.createQueue('steps-dlq', false);
      let charges = 0;
      const seen: unknown[] = [];
      const type = `payments.charge-${kind.replace(/\W/g, '')}`;
      const job = defineJob({
        type,
        queue: 'payments',
        schema,
        retry: { maxAttempts: 3, baseDelaySeconds: 1 },
        run: async (_data, ctx) => {
          // `unknown`: what plain JavaScript (or a cast) gets past the StepValue type.
          const value = await ctx.once('charge', async (): Promise<unknown> => {
            charges += 1;
            return make();
          });
          seen.push(value);
          if (ctx.attempt === 1) throw new TransientError('mail server down after the charge');
        },
      });
      const envelope = createEnvelope({
        type,
        source: '/checkout',
        id: `o-${type}`,
        data: { paymentId: 'p' },
      });
      await env.emulator.send(queue, envelope);
      const { handler, warnings } = worker([job], queue, dlq);

      const first = await env.emulator.deliver(queue, handler);
      expect(first.response.batchItemFailures).toHaveLength(1);
      const reason = `step 'charge' returned ${kind} at ${path}: ${JSON_RULE}`;
      const warned = warnings().filter(([message]) => message === reason);
      expect(warned).toHaveLength(1);
      expect(warned[0]?.[1]).toMatchObject({ notStored: 'step', stepName: 'charge', jobType: type });

      // The step record: done, with the marker and the reason, never the changed JSON.
      const step = await getItem(stepRecordKey(jobRecordKey(type, `/checkout\no-${type}`), 'charge'));
      expect(step?.valueStored?.BOOL).toBe(false);
      expect(step?.value).toBeUndefined();
      expect(step?.valueOmittedReason?.S).toBe('not-json');
      expect(step?.valueOmittedDetail?.S).toBe(reason);

      const second = await env.emulator.deliver(queue, handler);
      expect(second.delivered).toBe(1);
      expect(second.response.batchItemFailures).toEqual([]);
      expect(charges).toBe(1);
      // Only the first run's own value: the retry never got {}, an ISO string or null.
      expect(seen).toHaveLength(1);
      const [dead] = await env.emulator.receive(dlq);
      expect(dead?.Body).toBe(JSON.stringify(envelope));
      expect(dead?.MessageAttributes?.ErrorName?.StringValue).toBe('StepValueNotStoredError');
      expect(dead?.MessageAttributes?.ErrorMessage?.StringValue).toContain(reason);
      expect(dead?.MessageAttributes?.Attempts?.StringValue).toBe('2');
      expect(await env.emulator.receive(queue)).toEqual([]);
    });
  }

  it('a JSON step value still reads back on the retry, without a warning', async () => {
    const queue = await env.emulator.createQueue('steps-ok', false);
    const dlq = await env.emulator.createQueue('steps-ok-dlq', false);
    const seen: unknown[] = [];
    const job = defineJob({
      type: 'payments.charge-json',
      queue: 'payments',
      schema,
      retry: { maxAttempts: 3, baseDelaySeconds: 1 },
      run: async (_data, ctx) => {
        seen.push(
          await ctx.once('charge', async () => ({ chargeId: 'ch_1', at: '2026-11-29', n: [1, null] })),
        );
        if (ctx.attempt === 1) throw new TransientError('later step failed');
      },
    });
    await env.emulator.send(
      queue,
      createEnvelope({ type: job.type, source: '/checkout', data: { paymentId: 'p' } }),
    );
    const { handler, warnings } = worker([job], queue, dlq);
    await env.emulator.deliver(queue, handler);
    const second = await env.emulator.deliver(queue, handler);
    expect(second.response.batchItemFailures).toEqual([]);
    expect(seen).toEqual([
      { chargeId: 'ch_1', at: '2026-11-29', n: [1, null] },
      { chargeId: 'ch_1', at: '2026-11-29', n: [1, null] },
    ]);
    expect(warnings().filter(([message]) => String(message).includes('JSON values'))).toEqual([]);
    expect(await env.emulator.receive(dlq)).toEqual([]);
  });
});

describe('job results JSON would change', () => {
  it('are not stored as if faithful: WARN on the run, the record keeps the marker and the reason', async () => {
    const queue = await env.emulator.createQueue('results', false);
    const dlq = await env.emulator.createQueue('results-dlq', false);
    const job = defineJob({
      type: 'payments.capture-dated',
      queue: 'payments',
      schema,
      run: async () => ({ paymentId: 'pay-1', capturedAt: new Date('2026-11-29T08:00:00.000Z') }),
    });
    const envelope = createEnvelope({
      type: job.type,
      source: '/checkout',
      id: 'r-1',
      data: { paymentId: 'p' },
    });
    const { handler, warnings } = worker([job], queue, dlq);
    for (let copy = 0; copy < 2; copy++) {
      await env.emulator.send(queue, envelope);
      const { response } = await env.emulator.deliver(queue, handler);
      expect(response.batchItemFailures).toEqual([]);
    }
    const reason =
      "job 'payments.capture-dated' returned a Date at result.capturedAt: job results must be JSON values (objects, arrays, strings, finite numbers, booleans, null) so a duplicate delivery reads back the same";
    expect(warnings().filter(([message]) => message === reason)).toHaveLength(1);
    const item = await getItem(jobRecordKey(job.type, '/checkout\nr-1'));
    expect(item?.status?.S).toBe('COMPLETED');
    expect(item?.resultStored?.BOOL).toBe(false);
    expect(item?.result).toBeUndefined();
    expect(item?.resultOmittedReason?.S).toBe('not-json');
    expect(item?.resultOmittedDetail?.S).toBe(reason);
    expect(await env.emulator.receive(dlq)).toEqual([]);
  });
});
