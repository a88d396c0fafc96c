/**
 * A dead letter is counted when it is sent, not at the end of the invocation (issue 22): an
 * execution environment that crashes or times out later in the invocation never reaches the end,
 * and the `JobDeadLettered` alarm must still see every dead letter.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { PermanentError } from '../../lib/core/errors.ts';
import { defineJob } from '../../lib/runtime/job.ts';
import { jobBody, lambdaContext, sqsEvent, sqsRecord } from '../factories/sqs.ts';
import { type OutputLine, workerHarness } from '../factories/worker.ts';

/** Every JSON line written to stdout and stderr from now on, and a wait for a line to appear. */
function watchOutput(): {
  lines: OutputLine[];
  waitFor: (match: (line: OutputLine) => boolean) => Promise<void>;
} {
  const lines: OutputLine[] = [];
  const waiters: { match: (line: OutputLine) => boolean; resolve: () => void }[] = [];
  const collect = (chunk: string | Uint8Array) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    for (const raw of text.split('\n')) {
      if (raw.trim() === '') continue;
      let line: OutputLine;
      try {
        line = JSON.parse(raw) as OutputLine;
      } catch {
        continue;
      }
      lines.push(line);
      for (const waiter of waiters.filter((w) => w.match(line))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(collect);
  vi.spyOn(process.stderr, 'write').mockImplementation(collect);
  return {
    lines,
    waitFor: (match) =>
      lines.some(match) ? Promise.resolve() : new Promise((resolve) => waiters.push({ match, resolve })),
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('JobDeadLettered under a crash', () => {
  it.each([
    { name: "the worker's own EMF writer", metrics: { metrics: undefined } },
    { name: 'a given Powertools Metrics', metrics: {} },
  ])('is written before the invocation ends, with $name', async ({ metrics }) => {
    let releaseHang: () => void = () => {};
    const hang = new Promise<void>((resolve) => {
      releaseHang = resolve;
    });
    const job = defineJob({
      type: 'orders.capture',
      queue: 'jobs',
      schema: z.object({ orderId: z.string() }),
      timeoutSeconds: 900,
      run: async ({ orderId }) => {
        if (orderId === 'declined') throw new PermanentError('card declined');
        // Stands for the rest of an invocation that never finishes (the environment is killed).
        await hang;
      },
    });
    const h = workerHarness({ jobs: [job], ...metrics });
    const output = watchOutput();
    const invocation = h.handler(
      sqsEvent([
        sqsRecord({ body: jobBody('orders.capture', { orderId: 'declined' }) }),
        sqsRecord({ body: jobBody('orders.capture', { orderId: 'hangs' }) }),
      ]),
      lambdaContext(900_000),
    );

    // The dead letter is sent and logged while the other record still runs: here the environment dies.
    await output.waitFor((line) => line.message === 'job dead-lettered');
    expect(h.sqs.sentTo(h.dlqUrl)).toHaveLength(1);
    const counted = output.lines.filter((line) => '_aws' in line && 'JobDeadLettered' in line);
    expect(counted).toEqual([
      expect.objectContaining({ Queue: 'jobs', JobType: 'orders.capture', JobDeadLettered: 1 }),
    ]);

    releaseHang();
    await invocation;
    // Counted once: the end of the invocation does not write it again.
    expect(output.lines.filter((line) => '_aws' in line && 'JobDeadLettered' in line)).toHaveLength(1);
    expect(output.lines).toContainEqual(
      expect.objectContaining({ JobType: 'orders.capture', JobCompleted: 1 }),
    );
  });
});
