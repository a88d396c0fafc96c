/**
 * A batch's entries are checked as a user writes them: at compile time each child's and the
 * completion job's data against its own job's type (inline in `startBatch`, or built with
 * `batchChild` / `batchCompletion`), and at run time an entry's `options` with a key a batch does
 * not take (`runAt`, `id`) is refused, the allowed keys named, instead of being ignored (a child
 * meant for an hour later sent at once).
 */
import { batchChild, batchCompletion, defineJob, type JobContext } from 'sqs-jobs';
import { type BatchChildEntry, JobClient, JobClientError } from 'sqs-jobs/client';
import { runJob } from 'sqs-jobs/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FakeDynamoTable } from '../factories/fake-scheduler.ts';
import { typeCheck } from '../factories/type-check.ts';

const run = async (): Promise<void> => {};
const child = defineJob({ type: 'bills.child', queue: 'work', schema: z.object({ n: z.number() }), run });
const other = defineJob({ type: 'bills.other', queue: 'work', schema: z.object({ s: z.string() }), run });
const wide = defineJob({
  type: 'bills.wide',
  queue: 'work',
  schema: z.object({ n: z.number(), label: z.string() }),
  run,
});
const tiered = defineJob({
  type: 'bills.tiered',
  queue: 'work',
  schema: z.object({
    tier: z.enum(['gold', 'basic']),
    n: z.number(),
    address: z.object({ city: z.string() }).optional(),
  }),
  run,
});
const either = defineJob({
  type: 'bills.either',
  queue: 'work',
  schema: z.union([z.object({ a: z.number() }), z.object({ b: z.string() })]),
  run,
});
const summary = defineJob({
  type: 'bills.summary',
  queue: 'work',
  schema: z.object({ day: z.string() }),
  run,
});
const URLS = { work: 'https://sqs.eu-west-1.amazonaws.com/123456789012/work' };

/** An SQS client that takes every entry and counts them. */
class CountingSqs {
  sent = 0;
  async send(command: { input: { Entries?: { Id?: string }[] } }): Promise<unknown> {
    const entries = command.input.Entries ?? [{ Id: 'one' }];
    this.sent += entries.length;
    return { Successful: entries.map((e) => ({ Id: e.Id, MessageId: 'm' })), MessageId: 'm' };
  }
}

describe('batch entries at compile time (tsc --strict)', () => {
  it('checks each child and the completion job against its own job, inline or built', () => {
    // Compile-time assertions: these lines are checked by `tsc --noEmit`; at run time they only build specs.
    const spec = (client: JobClient, ctx: JobContext) => {
      void client.startBatch({
        children: [
          { job: child, data: { n: 1 } },
          { job: other, data: { s: 'x' } },
        ],
        completion: { job: summary, data: { day: 'd' } },
      });
      void client.startBatch({
        // @ts-expect-error a child's data is its job's data
        children: [{ job: child, data: { wrong: true } }],
        completion: { job: summary, data: { day: 'd' } },
      });
      void client.startBatch({
        children: [{ job: child, data: { n: 1 } }],
        // @ts-expect-error the completion job's data is its job's data
        completion: { job: summary, data: { nope: 1 } },
      });
      ctx.startBatch({
        children: [
          { job: child, data: { n: 1 } },
          // @ts-expect-error the second child is checked against its own job, not the first's
          { job: other, data: { n: 1 } },
        ],
        completion: { job: summary, data: { day: 'd' } },
      });
      ctx.startBatch({
        children: [1, 2].map((n) => ({ job: child, data: { n } })),
        completion: batchCompletion(summary, { day: 'd' }),
      });
      // @ts-expect-error batchChild checks the data against the job
      batchChild(child, { m: 1 });
      // @ts-expect-error batchCompletion too
      batchCompletion(summary, {});
      // @ts-expect-error a child takes partitionKey and delaySeconds only
      batchChild(child, { n: 1 }, { runAt: new Date() });
      // Children built elsewhere keep their check through batchChild; a loose array still compiles.
      const built: BatchChildEntry[] = [batchChild(child, { n: 1 }), batchChild(other, { s: 'x' })];
      ctx.startBatch({ children: built, completion: { job: summary, data: { day: 'd' } } });
    };
    expect(typeof spec).toBe('function');
    expect(batchChild(child, { n: 1 }, { partitionKey: 'p' })).toEqual({
      job: child,
      data: { n: 1 },
      options: { partitionKey: 'p' },
    });
    expect(batchCompletion(summary, { day: 'd' })).toEqual({ job: summary, data: { day: 'd' } });
  });

  it('checks each child of a .map that mixes jobs against its own job, keeping excess-key checks', () => {
    const spec = (client: JobClient, ctx: JobContext) => {
      const completion = { job: summary, data: { day: 'd' } };
      ctx.startBatch({
        children: [1, 2].map((n) =>
          n === 1 ? { job: child, data: { n } } : { job: other, data: { s: 'x' } },
        ),
        completion,
      });
      void client.startBatch({
        // @ts-expect-error data swapped between the two jobs of a .map: each child is its own job's
        children: [1, 2].map((n) =>
          n === 1 ? { job: child, data: { s: 'x' } } : { job: other, data: { n } },
        ),
        completion,
      });
      ctx.startBatch({
        // @ts-expect-error a child of `wide` lacks `label`: the other child's job (data { n }) does not excuse it
        children: [1, 2].map((n) => (n === 1 ? { job: child, data: { n } } : { job: wide, data: { n } })),
        completion,
      });
      ctx.startBatch({
        children: [
          { job: child, data: { n: 1 } },
          // @ts-expect-error a key the job's data does not have
          { job: other, data: { s: 'x', extra: 1 } },
        ],
        completion,
      });
      ctx.startBatch({
        // @ts-expect-error a nested key the job's data does not have
        children: [{ job: tiered, data: { tier: 'gold', n: 1, address: { city: 'x', zip: 1 } } }],
        completion,
      });
      // @ts-expect-error an entry key a child does not take
      ctx.startBatch({ children: [{ job: child, data: { n: 1 }, opts: {} }], completion });
      // A job whose data is a union takes each of its members.
      ctx.startBatch({
        children: [
          { job: either, data: { a: 1 } },
          { job: either, data: { b: 'x' } },
        ],
        completion,
      });
      ctx.startBatch({ children: [], completion });
    };
    expect(typeof spec).toBe('function');
  });

  it('an enum field in a .map: the plain form fails to compile (TypeScript widens it), batchChild or as const compile', () => {
    const spec = (ctx: JobContext) => {
      const completion = { job: summary, data: { day: 'd' } };
      ctx.startBatch({
        // @ts-expect-error `tier: 'gold'` widens to string in the callback: the error says to use batchChild
        children: [1, 2].map((n) => ({ job: tiered, data: { tier: 'gold', n } })),
        completion,
      });
      ctx.startBatch({ children: [1, 2].map((n) => batchChild(tiered, { tier: 'gold', n })), completion });
      ctx.startBatch({
        children: [1, 2].map((n) => ({ job: tiered, data: { tier: 'gold', n } as const })),
        completion,
      });
      ctx.startBatch({ children: [{ job: tiered, data: { tier: 'basic', n: 1 } }], completion });
      // @ts-expect-error not one of the enum's values
      ctx.startBatch({ children: [{ job: tiered, data: { tier: 'silver', n: 1 } }], completion });
    };
    expect(typeof spec).toBe('function');
  });
});

describe('the compile error a user reads', () => {
  it('a widened enum or a swapped child in a .map: tsc names the job and says to build children with batchChild', () => {
    const { status, output } = typeCheck(
      {
        'batch-children.ts': [
          "import { defineJob, type JobContext } from 'sqs-jobs';",
          "import { z } from 'zod';",
          'const run = async (): Promise<void> => {};',
          "const upgrade = defineJob({ type: 'u', queue: 'q', schema: z.object({ userId: z.string(), tier: z.enum(['gold', 'basic']) }), run });",
          "const email = defineJob({ type: 'e', queue: 'q', schema: z.object({ to: z.string() }), run });",
          "const done = defineJob({ type: 'd', queue: 'q', schema: z.object({}), run });",
          'declare const ctx: JobContext;',
          "ctx.startBatch({ children: ['u-1'].map((userId) => ({ job: upgrade, data: { userId, tier: 'gold' } })), completion: { job: done, data: {} } });",
          "ctx.startBatch({ children: ['u-1', 'a@b'].map((v) => (v.includes('@') ? { job: upgrade, data: { to: v } } : { job: email, data: { userId: v, tier: 'gold' as const } })), completion: { job: done, data: {} } });",
        ].join('\n'),
      },
      'batch-children',
    );
    expect(status).not.toBe(0);
    const errors = output
      .split('\n')
      .filter((line) => line.startsWith('batch-children.ts') || /\(\d+,\d+\): error/.test(line));
    expect(errors.map((line) => line.match(/\((\d+),\d+\)/)?.[1])).toEqual(['8', '9']);
    for (const line of errors) {
      expect(line).toContain('build each child with batchChild(job, data)');
    }
    // The widened field is named (tsc orders the enum's members its own way).
    expect(output).toMatch(/Type 'string' is not assignable to type '("gold" \| "basic"|"basic" \| "gold")'/);
  }, 120_000);
});

describe('batch entry options at run time', () => {
  it('JobClient.startBatch refuses a child runAt or id and a completion delaySeconds, naming the allowed keys; nothing written or sent', async () => {
    const sqs = new CountingSqs();
    const dynamodb = new FakeDynamoTable();
    const client = new JobClient({
      source: '/p',
      queueUrls: URLS,
      sqs,
      dynamodb,
      batches: { tableName: 'jobs-table' },
    });
    const error = await client
      .startBatch({
        children: [
          { job: child, data: { n: 1 }, options: { runAt: new Date(Date.now() + 3_600_000) } as never },
          { job: child, data: { n: 2 }, options: { id: 'mine' } as never },
        ],
        completion: { job: summary, data: { day: 'd' }, options: { delaySeconds: 5 } as never },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobClientError);
    const message = (error as JobClientError).message;
    expect((error as JobClientError).code).toBe('InvalidBatch');
    expect(message).toMatch(
      /children\[0\]\.options\.runAt is not an option \(known: delaySeconds, partitionKey\); did you mean delaySeconds/,
    );
    expect(message).toMatch(
      /children\[1\]\.options\.id is not an option .*a batch entry's id derives from the batch id/,
    );
    expect(message).toMatch(/completion\.options\.delaySeconds is not an option \(known: partitionKey\)/);
    expect(sqs.sent).toBe(0);
    expect(dynamodb.calls).toHaveLength(0);
  });

  it('a FIFO completion job without a partition key is refused in the option names a child uses (completion.options.partitionKey)', async () => {
    const fifoUrls = { work: 'https://sqs.eu-west-1.amazonaws.com/123456789012/work.fifo' };
    const starter = defineJob({
      type: 'bills.fifo-starter',
      queue: 'work',
      schema: z.object({}),
      async run(_data, ctx) {
        ctx.startBatch({
          children: [{ job: child, data: { n: 1 }, options: { partitionKey: 'user-1' } }],
          completion: { job: summary, data: { day: 'd' } },
        });
      },
    });
    const outcome = await runJob(starter, {}, { queueUrls: fifoUrls });
    expect(outcome.status).toBe('failed');
    const message = String(outcome.status === 'failed' && (outcome.error as Error).message);
    expect(message).toContain(
      'startBatch refused: completion.options.partitionKey is required on FIFO queue "work": it becomes the MessageGroupId',
    );
    expect(message).not.toMatch(/partitionkey/);
    // The same from a producer, before anything is written or sent.
    const sqs = new CountingSqs();
    const dynamodb = new FakeDynamoTable();
    const client = new JobClient({
      source: '/p',
      queueUrls: fifoUrls,
      sqs,
      dynamodb,
      batches: { tableName: 'jobs-table' },
    });
    const error = await client
      .startBatch({
        children: [{ job: child, data: { n: 1 }, options: { partitionKey: 'user-1' } }],
        completion: { job: summary, data: { day: 'd' } },
      })
      .catch((e: unknown) => e);
    expect((error as JobClientError).code).toBe('InvalidBatch');
    expect((error as Error).message).toMatch(
      /completion\.options\.partitionKey is required on FIFO queue "work"/,
    );
    expect(sqs.sent).toBe(0);
    expect(dynamodb.calls).toHaveLength(0);
    // Given one, the completion is taken.
    const given = await runJob(
      defineJob({
        type: 'bills.fifo-starter-2',
        queue: 'work',
        schema: z.object({}),
        async run(_data, ctx) {
          ctx.startBatch({
            children: [{ job: child, data: { n: 1 }, options: { partitionKey: 'user-1' } }],
            completion: { job: summary, data: { day: 'd' }, options: { partitionKey: 'summary' } },
          });
        },
      }),
      {},
      { queueUrls: fifoUrls },
    );
    expect(given.status).toBe('completed');
  });

  it('ctx.startBatch: the same refusal, so runJob fails the run as the worker dead-letters it', async () => {
    const later = defineJob({
      type: 'bills.later',
      queue: 'work',
      schema: z.object({}),
      async run(_data, ctx) {
        ctx.startBatch({
          children: [{ job: child, data: { n: 1 }, options: { runAt: new Date() } as never }],
          completion: { job: summary, data: { day: 'd' } },
        });
      },
    });
    const outcome = await runJob(later, {});
    expect(outcome.status).toBe('failed');
    if (outcome.status !== 'failed') return;
    expect((outcome.error as Error).name).toBe('ChildRejectedError');
    expect(outcome.next).toBe('dead-letter');
    expect(String(outcome.error)).toMatch(/children\[0\]\.options\.runAt is not an option/);
  });
});
