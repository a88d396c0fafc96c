/**
 * Fuzz of the record path (issue 22): generated SQS bodies, deep, wide and huge, valid envelopes
 * and broken ones, through a real worker (createWorker) with an in-memory idempotency guard and
 * SQS. No fault is injected: the guard always answers, SQS always accepts, jobs never fail. So
 * every record must end completed (or absorbed as a duplicate) or dead-lettered with evidence on
 * its first delivery; a record reported failed would come back, cycling until maxReceiveCount.
 *
 * It runs as its own process on the stack of Lambda's Node main thread: the Node runtime's
 * bootstrap starts `node` without `--stack-size`, and the handler runs on the main thread, so V8's
 * default of 984 KB (64-bit) is the limit; a vitest worker thread has another one. Run:
 *   node --stack-size=984 --import tsx test/support/record-fuzz.ts <records> [seed]
 * (`<records>` is approximate: batches of 1-10 records, about `records / 5.5` of them; a run of
 * 10,000 took 4 minutes of one busy core on 2026-12-01 and accounted for all 9,847 records).
 * (test/unit/record-fuzz.test.ts does). Prints one JSON line: `{ records, outcomes, problems, seed }`;
 * exits 1 when a record is unaccounted for.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import fc from 'fast-check';
import { z } from 'zod';
import { defineJob } from '../../lib/runtime/job.ts';
import { createWorker } from '../../lib/runtime/worker.ts';
import { FakeGuard } from '../factories/fake-guard.ts';
import { FakeSqs } from '../factories/fake-sqs.ts';
import { lambdaContext, queueUrl, sqsEvent, sqsRecord } from '../factories/sqs.ts';

/** SQS's largest message (1 MiB): no body generated here is longer. */
const MAX_BODY_BYTES = 1_048_576;
/** Room left for the envelope around the data. */
const MAX_DATA_BYTES = MAX_BODY_BYTES - 1_024;

const records = Number(process.argv[2] ?? 1_000);
const seed = process.argv[3] === undefined ? Date.now() % 2 ** 31 : Number(process.argv[3]);

/** The data of a record, as JSON text (written by hand: JSON.stringify itself overflows on deep values). */
type DataSpec =
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'deep'; readonly shape: keyof typeof LEVELS; readonly depth: number }
  | { readonly kind: 'wide'; readonly shape: 'object' | 'array'; readonly width: number }
  | { readonly kind: 'huge-string'; readonly chars: number; readonly char: string };

/** One level of nesting, opening and closing; `escaped-key` takes JSON.parse's reviver path (lib/core/json-parse.ts). */
const LEVELS = {
  array: ['[', ']'],
  object: ['{"a":', '}'],
  mixed: ['[{"a":', '}]'],
  'escaped-key': ['{"\\n":', '}'],
} as const;

function dataText(spec: DataSpec): string {
  switch (spec.kind) {
    case 'json':
      return JSON.stringify(spec.value) ?? 'null';
    case 'deep': {
      const [open, close] = LEVELS[spec.shape];
      const depth = Math.min(spec.depth, Math.floor(MAX_DATA_BYTES / (open.length + close.length)));
      return `${open.repeat(depth)}1${close.repeat(depth)}`;
    }
    case 'wide': {
      const parts: string[] = [];
      let bytes = 2;
      for (let i = 0; i < spec.width; i++) {
        const part = spec.shape === 'object' ? `"k${i}":${i}` : `{"i":${i}}`;
        bytes += part.length + 1;
        if (bytes > MAX_DATA_BYTES) break;
        parts.push(part);
      }
      return spec.shape === 'object' ? `{${parts.join(',')}}` : `[${parts.join(',')}]`;
    }
    case 'huge-string': {
      const unit = JSON.stringify(spec.char).slice(1, -1);
      const count = Math.min(spec.chars, Math.floor(MAX_DATA_BYTES / Buffer.byteLength(unit)));
      return `"${unit.repeat(count)}"`;
    }
  }
}

const dataSpec: fc.Arbitrary<DataSpec> = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 6 }).map((value) => ({ kind: 'json', value }) as const) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('deep' as const),
      shape: fc.constantFrom(...(Object.keys(LEVELS) as (keyof typeof LEVELS)[])),
      depth: fc.integer({ min: 1, max: 6_000 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('deep' as const),
      shape: fc.constantFrom(...(Object.keys(LEVELS) as (keyof typeof LEVELS)[])),
      depth: fc.integer({ min: 6_000, max: 600_000 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('wide' as const),
      shape: fc.constantFrom('object' as const, 'array' as const),
      width: fc.integer({ min: 1, max: 120_000 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('huge-string' as const),
      chars: fc.integer({ min: 1, max: 1_100_000 }),
      char: fc.constantFrom('x', 'é', '✓', '😀', '\n', '"', '\u001b'),
    }),
  },
);

/** How the body carries the data: a valid envelope of a job type, or one of the ways a body is broken. */
const wrapping = fc.constantFrom(
  'fuzz.plain',
  'fuzz.keyed',
  'fuzz.strict',
  'fuzz.unknown',
  'not-json',
  'data-alone',
  'no-id',
);

function bodyOf(data: string, wrap: string, index: number): string {
  if (wrap === 'data-alone') return data;
  const head: Record<string, unknown> = {
    specversion: '1.0',
    id: `job-${index}`,
    source: '/fuzz',
    type: wrap === 'no-id' ? 'fuzz.plain' : wrap === 'not-json' ? 'fuzz.plain' : wrap,
    time: '2026-12-01T00:00:00.000Z',
    datacontenttype: 'application/json',
  };
  if (wrap === 'no-id') delete head.id;
  const body = `${JSON.stringify(head).slice(0, -1)},"data":${data}}`;
  return wrap === 'not-json' ? body.slice(0, Math.max(1, body.length - 1)) : body;
}

const ran = new Set<string>();
const job = <S extends z.ZodType>(type: string, schema: S, key?: (data: z.infer<S>) => string) =>
  defineJob({
    type,
    queue: 'fuzz',
    schema,
    ...(key ? { idempotency: { key } } : {}),
    run: async (_data, ctx) => {
      ran.add(ctx.jobId);
      return 'ok';
    },
  });

/**
 * What the worker printed, one JSON object a line (it logs every record's outcome with its
 * messageId; Powertools writes warnings and errors to stderr).
 */
const lines: Record<string, unknown>[] = [];
const collect = ((chunk: string | Uint8Array) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      lines.push({ unparsed: line.slice(0, 200) });
    }
  }
  return true;
}) as typeof process.stdout.write;
const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
process.stdout.write = collect;
process.stderr.write = collect;

const sqs = new FakeSqs();
const guard = new FakeGuard();
const dlqUrl = queueUrl('fuzz-dlq');
const handler = createWorker({
  jobs: [
    job('fuzz.plain', z.unknown()),
    // A key function that fails on some data (deep values overflow JSON.stringify; undefined gives no string).
    job('fuzz.keyed', z.unknown(), (data) => JSON.stringify(data)),
    job('fuzz.strict', z.object({ orderId: z.string() })),
  ],
  queueName: 'fuzz',
  queueUrl: queueUrl('fuzz'),
  dlqUrl,
  handlerVersion: 'fuzz',
  idempotency: guard,
  sqs,
  logger: new Logger({ serviceName: 'fuzz', logLevel: 'INFO' }),
  logEachRecord: true,
  env: { POWERTOOLS_METRICS_DISABLED: 'true' },
});

const OUTCOMES = new Set(['completed', 'duplicate', 'dead-lettered', 'retry', 'deferred']);
const outcomes: Record<string, number> = {};
const problems: string[] = [];
let processed = 0;
let index = 0;

const batch = fc.array(fc.tuple(dataSpec, wrapping), { minLength: 1, maxLength: 10 });
try {
  await fc.assert(
    fc.asyncProperty(batch, async (specs) => {
      const recs = specs.map(([spec, wrap]) => sqsRecord({ body: bodyOf(dataText(spec), wrap, index++) }));
      lines.length = 0;
      // Only this batch's calls are kept: the DLQ bodies and lease requests of a long run (keys and
      // bodies up to 1 MiB each) would otherwise fill the heap (a 100,000-record run ran out of 4 GB).
      sqs.calls.length = 0;
      guard.begins.length = 0;
      const response = await handler(sqsEvent(recs), lambdaContext());
      const dlq = sqs.sentTo(dlqUrl);
      const found: string[] = [];
      // fuzz.keyed's key is its data: two records of a batch with the same data are one job
      // delivered twice at once, and the second is told "busy" (retried without spending an
      // attempt; its next delivery is absorbed as a duplicate). Legitimate, not cycling.
      const keyedData = specs.filter(([, wrap]) => wrap === 'fuzz.keyed').map(([spec]) => dataText(spec));
      const sharesKey = (spec: DataSpec) => keyedData.filter((d) => d === dataText(spec)).length > 1;
      const busyTwin = new Set<string>();
      for (const [i, record] of recs.entries()) {
        const [spec, wrap] = specs[i] as [DataSpec, string];
        const what = `${spec.kind}${'shape' in spec ? `/${spec.shape}` : ''} ${wrap} (${record.body.length} chars)`;
        const ends = lines.filter((l) => l.messageId === record.messageId && OUTCOMES.has(String(l.outcome)));
        const letters = dlq.filter(
          (m) => m.MessageAttributes?.SourceMessageId?.StringValue === record.messageId,
        );
        const end = ends.length === 1 ? String(ends[0]?.outcome) : `${ends.length} outcomes`;
        outcomes[end] = (outcomes[end] ?? 0) + 1;
        if (end === 'dead-lettered') {
          if (letters.length !== 1 || !letters[0]?.MessageAttributes?.ErrorName?.StringValue)
            found.push(`${what}: dead-lettered with ${letters.length} DLQ messages carrying evidence`);
        } else if (
          end === 'retry' &&
          ends[0]?.reason === 'busy' &&
          wrap === 'fuzz.keyed' &&
          sharesKey(spec)
        ) {
          busyTwin.add(record.messageId);
          outcomes[end] -= 1;
          outcomes['retry (busy: same key twice in the batch)'] =
            (outcomes['retry (busy: same key twice in the batch)'] ?? 0) + 1;
        } else if (end !== 'completed' && end !== 'duplicate') {
          const reasons = ends.map((l) => `${l.outcome}:${l.reason ?? ''}:${l.message}`).join(' | ');
          found.push(`${what}: ended ${end} (${reasons})`);
        } else if (letters.length > 0) {
          found.push(`${what}: ${end} and dead-lettered`);
        }
      }
      const cycling = response.batchItemFailures.filter((f) => !busyTwin.has(f.itemIdentifier));
      if (cycling.length > 0) found.push(`${cycling.length} records reported failed (they would cycle)`);
      for (const line of lines)
        if (
          line.outcome === 'batch-failed' ||
          line.message === 'unexpected error in the worker while processing a record'
        )
          found.push(`worker fault: ${String(line.message)}`);
      processed += recs.length;
      if (found.length > 0) {
        problems.push(...found);
        throw new Error(found.join('\n'));
      }
    }),
    { numRuns: Math.max(1, Math.ceil(records / 5.5)), seed, endOnFailure: true },
  );
} catch (error) {
  if (problems.length === 0) problems.push(String((error as Error).message).slice(0, 4_000));
}
process.stdout.write = writes.stdout;
process.stderr.write = writes.stderr;
process.stdout.write(`${JSON.stringify({ records: processed, outcomes, ran: ran.size, problems, seed })}\n`);
process.exitCode = problems.length > 0 ? 1 : 0;
