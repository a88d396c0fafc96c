/**
 * Per-key concurrency through the real worker on the emulators (fauxqs + dynalite, the default
 * idempotency table holding the slots): several invocations at once, as Lambda's pollers drive a
 * busy queue, never run more than the limit of one key, every job runs exactly once, and the
 * waits never reach the DLQ (the queue's maxReceiveCount is 10, each job waits many more times).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createEnvelope } from '../../lib/core/envelope.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import type { AnyJob } from '../../lib/runtime/record/index.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import type { EmulatedQueue } from '../factories/emulated-sqs.ts';
import { useGuardedEmulators } from '../factories/guarded-emulators.ts';

const env = useGuardedEmulators();

function worker(jobs: AnyJob[], queue: EmulatedQueue, dlq: EmulatedQueue) {
  const metrics = new Metrics({ namespace: 'SqsJobs' });
  metrics.clearDefaultDimensions();
  return createWorker({
    jobs,
    sqs: env.emulator.sqs,
    // The wait's jitter at its low end: a waiting job comes back at once, so the test runs at the
    // emulators' speed (production waits are spread over 0–1 s, doubling per wait).
    random: () => 0,
    logger: new Logger({ logLevel: 'SILENT' }),
    metrics,
    env: {
      JOBS_QUEUE_NAME: 'reports',
      JOBS_QUEUE_URL: queue.url,
      JOBS_DLQ_URL: dlq.url,
      JOBS_IDEMPOTENCY_TABLE: env.tableName,
    },
  });
}

const schema = z.object({ tenantId: z.string(), reportId: z.number() });

describe('per-key concurrency on the emulators', () => {
  it('runs 200 jobs of one key with a limit of 2 through 4 concurrent pollers: never a third at once, each exactly once, none dead-lettered', async () => {
    const { queue, dlq } = await env.emulator.createQueuePair('reports', false);
    let running = 0;
    let maxRunning = 0;
    const runs = new Map<number, number>();
    const waiting: (() => void)[] = [];
    const job = defineJob({
      type: 'reports.build',
      queue: 'reports',
      schema,
      concurrency: { key: (data) => data.tenantId, limit: 2 },
      async run({ reportId }) {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        runs.set(reportId, (runs.get(reportId) ?? 0) + 1);
        // Holds its slot until a second job of the key runs too (or briefly, when none comes):
        // every chance of a third one is given while two are running.
        if (running >= 2) for (const wake of waiting.splice(0)) wake();
        else
          await new Promise<void>((resolve) => {
            waiting.push(resolve);
            setTimeout(resolve, 20);
          });
        running -= 1;
      },
    });
    const total = 200;
    await Promise.all(
      Array.from({ length: total }, (_, reportId) =>
        env.emulator.send(
          queue,
          createEnvelope({ type: job.type, source: '/test', data: { tenantId: 'tenant-1', reportId } }),
        ),
      ),
    );

    const pollers = 4;
    const handlers = Array.from({ length: pollers }, () => worker([job], queue, dlq));
    let resent = 0;
    const poll = async (index: number) => {
      const handler = handlers[index] as (typeof handlers)[number];
      // Until every job ran: a poll that finds nothing (the others hold the messages) tries again.
      while (runs.size < total) {
        const { response, delivered } = await env.emulator.deliver(queue, handler);
        expect(response.batchItemFailures).toEqual([]);
        resent += delivered;
      }
    };
    await Promise.all(Array.from({ length: pollers }, (_, index) => poll(index)));

    expect(maxRunning).toBe(2);
    expect(runs.size).toBe(total);
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    // Far more deliveries than jobs: most were waits (each a re-sent copy, not an attempt).
    expect(resent).toBeGreaterThan(total);
    expect(await env.emulator.receive(dlq)).toEqual([]);
    expect(await env.emulator.receive(queue)).toEqual([]);
  }, 240_000);
});
