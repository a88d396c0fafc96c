/**
 * CPU profile of warm records through createWorker, default settings (logger, metrics), no store (issue 10):
 * `npx node --cpu-prof --cpu-prof-dir=.profiles --import tsx bench/profile.ts [standard|fifo10|fifo1] [records]`
 * then read the `.cpuprofile` in Chrome DevTools, or `npx tsx bench/profile-top.ts <file>` for the top self times.
 */
import type { SQSEvent } from 'aws-lambda';
import { z } from 'zod';
import { defineJob } from '../lib/runtime/job.ts';
import { newTraceparent } from '../lib/runtime/trace-context.ts';
import { createWorker } from '../lib/runtime/worker.ts';
import { FakeSqs } from '../test/factories/fake-sqs.ts';
import { jobBody, lambdaContext, queueUrl, sqsEvent, sqsRecord } from '../test/factories/sqs.ts';

const mode = process.argv[2] ?? 'standard';
const records = Number(process.argv[3] ?? 30_000);
const queue = mode === 'standard' ? 'bench' : 'bench.fifo';
const groups = mode === 'fifo1' ? 1 : 10;
const job = defineJob({
  type: 'bench.compute',
  queue: 'bench',
  schema: z.object({ orderId: z.string(), userId: z.string() }),
  run: async (data) => data.orderId.length,
});
const handler = createWorker({
  jobs: [job],
  queueName: 'bench',
  queueUrl: queueUrl(queue),
  dlqUrl: queueUrl(`${queue}-dlq`),
  idempotency: false,
  sqs: new FakeSqs(),
});
// Built once and run PASSES times (no store: the same events run again), so setup stays out of the profile.
const PASSES = Number(process.env.PASSES ?? 10);
const events: SQSEvent[] = Array.from({ length: records / 10 / PASSES }, (_, b) =>
  sqsEvent(
    Array.from({ length: 10 }, (_, i) => {
      const userId = `user-${i % groups}`;
      return sqsRecord({
        queue,
        // With a traceparent, as every JobClient body has.
        body: jobBody(
          job.type,
          { orderId: `order-${b}-${i}`, userId },
          { partitionKey: userId, lineage: { traceparent: newTraceparent() } },
        ),
        ...(queue.endsWith('.fifo') ? { groupId: userId } : {}),
      });
    }),
  ),
);
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (() => true) as typeof process.stdout.write;
const context = lambdaContext();
const before = process.cpuUsage();
for (let pass = 0; pass < PASSES; pass++) for (const event of events) await handler(event, context);
const used = process.cpuUsage(before);
process.stdout.write = write;
console.log(
  `${mode}: ${((used.user + used.system) / records).toFixed(2)} µs CPU/record over ${records} records`,
);
