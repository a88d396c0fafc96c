/**
 * The worker of `sqs-jobs/worker` with its features opt-in at import (lib/runtime/features/):
 * what the jobs declare without its feature is refused at createWorker with the import to add;
 * a message that needs a missing feature is dead-lettered at once as `MissingFeature` (the
 * evidence names the import and says to redrive), never run without the feature's guarantee (a
 * batch child uncounted, a job sent for later unchecked for cancellation); `ctx.enqueue` and
 * `ctx.startBatch` without their features fail permanently, naming the import, even when the job
 * catches the error. Only the feature objects this copy exports are taken, and batches only with
 * children. Given its features, the lean worker runs as `sqs-jobs`' does.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEnvelope, type EnvelopeBatchAttributes } from '../../lib/core/envelope.ts';
import { batches } from '../../lib/runtime/features/batches.ts';
import { children } from '../../lib/runtime/features/children.ts';
import { groupParking } from '../../lib/runtime/features/group-parking.ts';
import { limits } from '../../lib/runtime/features/limits.ts';
import { rawMessages } from '../../lib/runtime/features/raw-messages.ts';
import { scheduledJobs } from '../../lib/runtime/features/scheduled-jobs.ts';
import type { ScheduledStart, ScheduledStartRequest } from '../../lib/runtime/idempotency/guard.ts';
import { defineJob, type JobContext } from '../../lib/runtime/job.ts';
import { defineRateLimit } from '../../lib/runtime/limits/rate-limit.ts';
import { createLeanWorker } from '../../lib/runtime/worker.ts';
import { WorkerConfigError } from '../../lib/runtime/worker-errors.ts';
import { MemoryLimitStore } from '../../lib/testing/memory-limits.ts';
import { MemoryIdempotencyStore } from '../../lib/testing/memory-store.ts';
import { FakeGuard } from '../factories/fake-guard.ts';
import { queueUrl, sqsRecord } from '../factories/sqs.ts';
import { workerHarness } from '../factories/worker.ts';

const attribute = (
  sent: { MessageAttributes?: Record<string, { StringValue?: string }> } | undefined,
  name: string,
) => sent?.MessageAttributes?.[name]?.StringValue;

function recordingJob(ran: string[], run?: (ctx: JobContext) => void) {
  return defineJob({
    type: 'orders.ship',
    queue: 'jobs',
    schema: z.object({ orderId: z.string() }),
    async run({ orderId }, ctx) {
      ran.push(orderId);
      run?.(ctx);
    },
  });
}

function envelopeRecord(
  id: string,
  extra: { batch?: EnvelopeBatchAttributes; schedule?: { runat: string; schedulegeneration: string } },
) {
  const envelope = createEnvelope({
    type: 'orders.ship',
    source: '/shop',
    id,
    data: { orderId: id },
    ...extra,
  });
  return sqsRecord({ body: JSON.stringify(envelope), messageId: `m-${id}` });
}

/** The config error createWorker of sqs-jobs/worker throws for `options`, as text. */
function configError(options: Parameters<typeof createLeanWorker>[0]): string {
  try {
    createLeanWorker({ queueUrl: queueUrl('jobs'), dlqUrl: queueUrl('jobs-dlq'), env: {}, ...options });
  } catch (error) {
    expect(error).toBeInstanceOf(WorkerConfigError);
    return (error as Error).message;
  }
  throw new Error('createWorker did not throw');
}

describe('sqs-jobs/worker: what the jobs declare needs its feature, at createWorker', () => {
  const base = {
    type: 'reports.build',
    queue: 'jobs',
    schema: z.object({ id: z.string() }),
    run: async () => {},
  };

  it('a job with a concurrency limit or rate limits without `limits`: refused, naming the job and the import', () => {
    const concurrency = defineJob({ ...base, concurrency: { key: (d: { id: string }) => d.id, limit: 1 } });
    expect(configError({ jobs: [concurrency], idempotency: false })).toMatch(
      /job reports\.build declares concurrency or rate limits: that needs the limits feature; add it: import \{ limits \} from 'sqs-jobs\/worker'/,
    );
    const rated = defineJob({ ...base, rateLimits: [defineRateLimit({ name: 'partner', perSecond: 5 })] });
    expect(configError({ jobs: [rated], idempotency: false })).toMatch(
      /import \{ limits \} from 'sqs-jobs\/worker'/,
    );
    expect(() =>
      createLeanWorker({
        jobs: [rated],
        features: [limits],
        limits: new MemoryLimitStore(),
        idempotency: false,
      }),
    ).not.toThrow();
  });

  it('a job that accepts raw messages without `rawMessages`: refused, naming the import', () => {
    const raw = defineJob({ ...base, raw: { from: 'json', id: 'sqs-message-id' } });
    expect(configError({ jobs: [raw], idempotency: false })).toMatch(
      /job reports\.build accepts raw messages: that needs the rawMessages feature; add it: import \{ rawMessages \} from 'sqs-jobs\/worker'/,
    );
    expect(() =>
      createLeanWorker({ jobs: [raw], features: [rawMessages], idempotency: false }),
    ).not.toThrow();
  });

  it("onDeadLetter: 'park' (the worker's or a job's) without `groupParking`: refused, naming the import", () => {
    const job = defineJob(base);
    const guard = new MemoryIdempotencyStore();
    expect(configError({ jobs: [job], onDeadLetter: 'park', idempotency: guard })).toMatch(
      /onDeadLetter parks its FIFO group \(onDeadLetter: 'park'\): that needs the groupParking feature; add it: import \{ groupParking \} from 'sqs-jobs\/worker'/,
    );
    const parking = defineJob({ ...base, onDeadLetter: 'park' });
    expect(configError({ jobs: [parking], idempotency: guard })).toMatch(
      /job reports\.build parks its FIFO group/,
    );
    expect(() =>
      createLeanWorker({ jobs: [parking], features: [groupParking], idempotency: guard }),
    ).not.toThrow();
  });

  it('features that are not feature objects of sqs-jobs/worker: refused', () => {
    const job = defineJob(base);
    expect(configError({ jobs: [job], features: [{ name: 'batch' }] as never })).toMatch(
      /features\[0\] is not a feature of sqs-jobs\/worker: it must be one of the objects exported by sqs-jobs\/worker/,
    );
  });

  it('a look-alike of a feature (right name, not the exported object, or from another copy of sqs-jobs): refused at createWorker', () => {
    const job = defineJob(base);
    // What a second installed copy of sqs-jobs exports: the same shape, another copy's brand.
    const { ...otherCopy } = Object.fromEntries(Object.entries(children));
    for (const lookAlike of [{ name: 'children' }, otherCopy]) {
      expect(configError({ jobs: [job], features: [lookAlike] as never })).toMatch(
        /features\[0\] \(named children\) is not a feature of sqs-jobs\/worker: it must be one of the objects exported by sqs-jobs\/worker .*from another copy of sqs-jobs \(two installed versions/,
      );
    }
    // A copy of the exported object is the same feature.
    expect(() =>
      createLeanWorker({ jobs: [job], features: [{ ...children }], idempotency: false }),
    ).not.toThrow();
  });

  it('batches without children: refused, naming both imports', () => {
    const job = defineJob(base);
    expect(configError({ jobs: [job], features: [batches], idempotency: false })).toMatch(
      /batches needs children .*features: \[children, batches\]/,
    );
    expect(() =>
      createLeanWorker({ jobs: [job], features: [children, batches], idempotency: false }),
    ).not.toThrow();
  });
});

describe('sqs-jobs/worker: a message that needs a missing feature is dead-lettered at once, never run without it', () => {
  it.each([
    {
      what: 'a batch child',
      batch: { batchid: 'b-1' },
      needs: /job orders\.ship: a batch child \(batchid\)/,
    },
    {
      what: 'a batch completion job',
      batch: { completesbatch: 'b-1' },
      needs: /job orders\.ship: a batch completion job \(completesbatch\)/,
    },
    {
      what: 'a batch watchdog message',
      batch: { batchwatch: 'b-1' },
      needs: /a batch watchdog message \(batchwatch\)/,
    },
  ])(
    '$what without `batches`: not run, in the DLQ as MissingFeature naming the import, on its first delivery',
    async ({ batch, needs }) => {
      const ran: string[] = [];
      const h = workerHarness({ jobs: [recordingJob(ran)], features: [children] });
      const record = envelopeRecord('o-1', { batch });
      const { response } = await h.invoke([record]);

      expect(response.batchItemFailures).toEqual([]);
      expect(ran).toEqual([]);
      const [sent] = h.sqs.sentTo(h.dlqUrl);
      expect(sent?.MessageBody).toBe(record.body);
      expect(attribute(sent, 'ErrorName')).toBe('MissingFeature');
      expect(attribute(sent, 'Attempts')).toBe('1');
      const message = attribute(sent, 'ErrorMessage');
      expect(message).toMatch(needs);
      expect(message).toMatch(
        /needs the batches feature, which this worker was built without: add it: import \{ batches \} from 'sqs-jobs\/worker' .*, redeploy, then redrive this message from the DLQ/,
      );
    },
  );

  it('a batch child on a worker without batches and children: the evidence names both imports', async () => {
    const h = workerHarness({ jobs: [recordingJob([])], features: [] });
    await h.invoke([envelopeRecord('o-7', { batch: { batchid: 'b-2' } })]);
    const [sent] = h.sqs.sentTo(h.dlqUrl);
    expect(attribute(sent, 'ErrorName')).toBe('MissingFeature');
    expect(attribute(sent, 'ErrorMessage')).toMatch(
      /a batch child \(batchid\) needs the batches feature \(and children, which it needs\).*add them: import \{ children, batches \} from 'sqs-jobs\/worker'.*redrive this message/,
    );
  });

  it('a job sent for later without `scheduledJobs`: not run, its cancel check never skipped, in the DLQ as MissingFeature', async () => {
    class SchedulingGuard extends FakeGuard {
      readonly starts: ScheduledStartRequest[] = [];
      async startScheduledJob(request: ScheduledStartRequest): Promise<ScheduledStart> {
        this.starts.push(request);
        return 'cancelled';
      }
    }
    const ran: string[] = [];
    const guard = new SchedulingGuard();
    const h = workerHarness({ jobs: [recordingJob(ran)], idempotency: guard, features: [] });
    const record = envelopeRecord('o-2', {
      schedule: { runat: new Date(Date.now() - 1000).toISOString(), schedulegeneration: '1' },
    });
    const { response } = await h.invoke([record]);

    expect(response.batchItemFailures).toEqual([]);
    expect(ran).toEqual([]);
    expect(guard.begins).toEqual([]);
    const [sent] = h.sqs.sentTo(h.dlqUrl);
    expect(attribute(sent, 'ErrorName')).toBe('MissingFeature');
    expect(attribute(sent, 'ErrorMessage')).toMatch(
      /job orders\.ship: a job sent for later \(runat\), whose cancel check needs the scheduledJobs feature.*import \{ scheduledJobs \} from 'sqs-jobs\/worker'.*redrive this message/,
    );
  });
});

describe('sqs-jobs/worker: ctx.enqueue and ctx.startBatch without their features fail permanently, naming the import', () => {
  const child = defineJob({
    type: 'orders.notify',
    queue: 'jobs',
    schema: z.object({ orderId: z.string() }),
    run: async () => {},
  });

  it('ctx.enqueue without `children`: dead-lettered, nothing sent; with it, the child is sent', async () => {
    const ran: string[] = [];
    const job = recordingJob(ran, (ctx) => ctx.enqueue(child, { orderId: 'o-3' }));
    const lean = workerHarness({ jobs: [job, child], features: [] });
    const { response } = await lean.invoke([envelopeRecord('o-3', {})]);
    expect(response.batchItemFailures).toEqual([]);
    const [sent] = lean.sqs.sentTo(lean.dlqUrl);
    expect(attribute(sent, 'ErrorName')).toBe('MissingFeature');
    expect(attribute(sent, 'ErrorMessage')).toMatch(
      /job orders\.ship: ctx\.enqueue needs the children feature, which this worker was built without: add it: import \{ children \} from 'sqs-jobs\/worker'/,
    );
    expect(lean.sqs.batchEntries()).toEqual([]);

    const withChildren = workerHarness({
      jobs: [job, child],
      features: [children],
      queueUrls: { jobs: queueUrl('jobs') },
    });
    const ok = await withChildren.invoke([envelopeRecord('o-4', {})]);
    expect(ok.response.batchItemFailures).toEqual([]);
    expect(withChildren.sqs.sentTo(withChildren.dlqUrl)).toEqual([]);
    const sentChildren = withChildren.sqs.batchEntries();
    expect(sentChildren.map((m) => JSON.parse(m.MessageBody ?? '{}').type)).toEqual(['orders.notify']);
  });

  it("ctx.startBatch without `batches`: dead-lettered naming its import, and children's too when missing", async () => {
    const job = recordingJob([], (ctx) => ctx.startBatch({ children: [], completion: undefined } as never));
    for (const [features, imports] of [
      [[children], 'batches'],
      [[], 'children, batches'],
    ] as const) {
      const h = workerHarness({ jobs: [job], features });
      await h.invoke([envelopeRecord('o-5', {})]);
      const [sent] = h.sqs.sentTo(h.dlqUrl);
      expect(attribute(sent, 'ErrorName')).toBe('MissingFeature');
      expect(attribute(sent, 'ErrorMessage')).toMatch(
        new RegExp(
          `ctx\\.startBatch needs the batches feature.*import \\{ ${imports} \\} from 'sqs-jobs/worker'`,
        ),
      );
    }
  });

  it.each([
    {
      method: 'ctx.enqueue',
      feature: 'children',
      call: (ctx: JobContext) => ctx.enqueue(child, { orderId: 'c' }),
    },
    {
      method: 'ctx.startBatch',
      feature: 'batches',
      call: (ctx: JobContext) => ctx.startBatch({ children: [], completion: undefined } as never),
    },
    {
      method: 'ctx.rateLimit',
      feature: 'limits',
      call: (ctx: JobContext) => ctx.rateLimit(defineRateLimit({ name: 'partner', perSecond: 5 })),
    },
  ])(
    'a job that catches the MissingFeatureError of $method still fails permanently: in the DLQ at once, not completed',
    async ({ method, feature, call }) => {
      const caught: string[] = [];
      const job = recordingJob([], () => {});
      const swallowing = defineJob({
        ...job,
        type: 'orders.swallow',
        async run(_data: { orderId: string }, ctx: JobContext) {
          try {
            await call(ctx);
          } catch (error) {
            caught.push((error as Error).name);
          }
        },
      } as never);
      const h = workerHarness({ jobs: [swallowing, child], features: [] });
      const envelope = createEnvelope({
        type: 'orders.swallow',
        source: '/shop',
        id: 's-1',
        data: { orderId: 's-1' },
      });
      const { response } = await h.invoke([
        sqsRecord({ body: JSON.stringify(envelope), messageId: 'm-s-1' }),
      ]);

      expect(caught).toEqual(['MissingFeature']);
      expect(response.batchItemFailures).toEqual([]);
      const [sent] = h.sqs.sentTo(h.dlqUrl);
      expect(attribute(sent, 'ErrorName')).toBe('MissingFeature');
      expect(attribute(sent, 'Attempts')).toBe('1');
      expect(attribute(sent, 'ErrorMessage')).toMatch(
        new RegExp(`job orders\\.swallow: ${method.replace('.', '\\.')} needs the ${feature} feature`),
      );
      expect(h.sqs.batchEntries()).toEqual([]);
    },
  );
});

describe('sqs-jobs/worker given its features runs as sqs-jobs does', () => {
  it('scheduledJobs: a due job sent for later is checked, then runs; a cancelled one is not run and not dead-lettered', async () => {
    class SchedulingGuard extends FakeGuard {
      readonly starts: string[] = [];
      async startScheduledJob(request: ScheduledStartRequest): Promise<ScheduledStart> {
        this.starts.push(request.id);
        return request.id === 'o-cancelled' ? 'cancelled' : 'started';
      }
    }
    const ran: string[] = [];
    const guard = new SchedulingGuard();
    const h = workerHarness({ jobs: [recordingJob(ran)], idempotency: guard, features: [scheduledJobs] });
    const schedule = { runat: new Date(Date.now() - 1000).toISOString(), schedulegeneration: '1' };
    const { response } = await h.invoke([
      envelopeRecord('o-due', { schedule }),
      envelopeRecord('o-cancelled', { schedule }),
    ]);
    expect(response.batchItemFailures).toEqual([]);
    expect(guard.starts.sort()).toEqual(['o-cancelled', 'o-due']);
    expect(ran).toEqual(['o-due']);
    expect(h.sqs.sentTo(h.dlqUrl)).toEqual([]);
  });

  it('limits: a job with a concurrency limit takes its slot and runs', async () => {
    const ran: string[] = [];
    const job = defineJob({
      type: 'orders.ship',
      queue: 'jobs',
      schema: z.object({ orderId: z.string() }),
      concurrency: { key: (d: { orderId: string }) => d.orderId, limit: 1 },
      async run({ orderId }) {
        ran.push(orderId);
      },
    });
    const h = workerHarness({ jobs: [job], features: [limits], limits: new MemoryLimitStore() });
    const { response } = await h.invoke([envelopeRecord('o-6', {})]);
    expect(response.batchItemFailures).toEqual([]);
    expect(ran).toEqual(['o-6']);
  });
});
