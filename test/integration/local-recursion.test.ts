/**
 * Lambda's recursive loop detection, emulated by the local runtime (lib/local/xray.ts), on a
 * chain of 20 jobs that each re-enqueue the next on their own queue (test/fixtures/chain-worker.ts,
 * bundled by two JobQueues synthesized here): with `recursiveLoop: ALLOW` every step runs; with
 * `TERMINATE` the 17th invocation of the chain is held back, said in a `note:`, and its message
 * reaches the DLQ after `maxReceiveCount` receives, as on Lambda. The hops are counted through
 * what a real worker propagates: the trace header Lambda sets, copied by the bundled AWS SDK into
 * its SendMessageBatch requests, kept by SQS as `AWSTraceHeader` (the envelope's own lineage and
 * traceparent play no part). Also seen here: each invocation's X-Ray trace id in the function
 * logs (Powertools' `xray_trace_id`), and one X-Ray subsegment per job with its annotations, sent
 * by the bundled Powertools Tracer to the local stand-in for the X-Ray daemon.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ChangeMessageVisibilityCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { App, Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue } from '../../lib/constructs/job-queue.ts';
import { parseTraceHeader } from '../../lib/core/aws-trace-header.ts';
import { createEnvelope } from '../../lib/core/envelope.ts';
import { type LocalRuntime, startLocalRuntime } from '../../lib/local/runtime.ts';
import { RECURSION_STOP_INVOCATIONS } from '../../lib/local/xray.ts';
import { removeDir, tempOutdir } from '../infra/helpers.ts';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const STEPS = 20;

let outdir: string;
let rt: LocalRuntime;
const logs: Record<string, unknown>[] = [];
const notes: string[] = [];
const stops: { queueUrl: string; messageId: string; receiptHandle: string; invocation: number }[] = [];

/** Synthesizes the two chain queues (each enqueueing to itself) into `outdir`. */
function synthesizeChainApp(dir: string): void {
  const app = new App({ outdir: dir });
  const stack = new Stack(app, 'ChainStack');
  for (const [id, name, recursiveLoop] of [
    ['Allow', 'chain-allow', lambda.RecursiveLoop.ALLOW],
    ['Terminate', 'chain-terminate', lambda.RecursiveLoop.TERMINATE],
    ['Mixed', 'chain-mixed', lambda.RecursiveLoop.TERMINATE],
  ] as const) {
    const q = new JobQueue(stack, id, {
      name,
      entry: 'test/fixtures/chain-worker.ts',
      projectRoot: PROJECT_ROOT,
      maxAttempts: 1,
      jobTimeoutSeconds: 5,
      maxReceiveCount: 2,
      idempotencyTable: false,
      alarmTopic: false,
      recursiveLoop,
    });
    q.addEnqueueTarget(name, q.queue);
  }
  app.synth();
}

async function until<T>(probe: () => T | undefined | false, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The `chain step` log lines of one chain, by hop. */
function steps(chain: string): Record<string, unknown>[] {
  return logs
    .filter((l) => l.message === 'chain step' && l.chain === chain)
    .sort((a, b) => Number(a.hop) - Number(b.hop));
}

function stepBody(chain: string, hop: number, last: number): string {
  return JSON.stringify(
    createEnvelope({ type: 'chain.step', source: '/tests/recursion', data: { chain, hop, last } }),
  );
}

async function startChain(queue: string, chain: string): Promise<void> {
  const body = stepBody(chain, 1, STEPS);
  await rt.sqs.send(new SendMessageCommand({ QueueUrl: rt.queue(queue).url, MessageBody: body }));
}

beforeAll(async () => {
  outdir = tempOutdir('recursion');
  synthesizeChainApp(outdir);
  rt = await startLocalRuntime({
    assemblyDir: outdir,
    synthesize: 'never',
    env: {},
    receiveWaitTimeSeconds: 1,
    // The queues keep the template's visibility timeout (6 x the function timeout): no step,
    // however slow the machine, is received twice. The held-back message is made visible again
    // by the test when the runtime reports it held back (onRecursionStopped), as its visibility
    // timeout would later, and reaches the DLQ on its third receive.
    prewarm: true,
    functionLogs: (line) => {
      try {
        logs.push(JSON.parse(line.line) as Record<string, unknown>);
      } catch {
        // not a JSON line
      }
    },
    onNote: (note) => notes.push(note),
    onRecursionStopped: (stop) => stops.push(stop),
  });
}, 120_000);

afterAll(async () => {
  await rt?.stop();
  removeDir(outdir);
});

describe('a chain of 20 steps on one queue, with Lambda recursive loop detection emulated', () => {
  it('recursiveLoop ALLOW: all 20 steps run, one trace, the Lineage counting 1..20', async () => {
    await startChain('chain-allow', 'allow');
    const done = await until(
      () => steps('allow').length === STEPS && steps('allow'),
      '20 steps of chain-allow',
    );
    expect(done.map((l) => l.hop)).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1));
    const headers = done.map((l) => parseTraceHeader(String(l.traceHeader)));
    // Every step continues the trace of the first: the header travelled through SQS.
    expect(new Set(headers.map((h) => h?.root)).size).toBe(1);
    expect(headers.map((h) => Number(h?.lineage?.split(':')[1]))).toEqual(done.map((l) => l.hop));
    expect(headers.every((h) => h?.sampled === '1')).toBe(true);
    // Powertools Logger adds the invocation's trace id to every line (SQS_JOBS_FUNCTION_LOGS=1 shows it).
    expect(done.map((l) => l.xray_trace_id)).toEqual(headers.map((h) => h?.root));
    expect(notes.filter((n) => n.includes('Allow'))).toEqual([]);
  }, 90_000);

  it(`recursiveLoop TERMINATE: steps 1..${RECURSION_STOP_INVOCATIONS} run, the next is held back with a note and ends in the DLQ`, async () => {
    await startChain('chain-terminate', 'terminate');
    await until(() => notes.length > 0 && notes, 'the note of the held-back step');
    const ran = steps('terminate');
    expect(ran.map((l) => l.hop)).toEqual(
      Array.from({ length: RECURSION_STOP_INVOCATIONS }, (_, i) => i + 1),
    );
    expect(notes[0]).toMatch(
      new RegExp(
        `would be invocation ${RECURSION_STOP_INVOCATIONS + 1} of its chain \\(RecursiveLoop is not Allow\\)`,
      ),
    );
    const worker = rt.worker('chain-terminate');
    const queueUrl = rt.queue('chain-terminate').url;
    // Each receive of the held-back message is held back again; made visible at once each time
    // (what its visibility timeout does later), the third receive moves it to the DLQ (maxReceiveCount 2).
    for (const receive of [1, 2]) {
      const stop = await until(() => stops[receive - 1], `held-back receive ${receive}`);
      expect(stop).toMatchObject({ queueUrl, invocation: RECURSION_STOP_INVOCATIONS + 1 });
      expect(notes[0]).toContain(`message ${stop.messageId} would be invocation`);
      await rt.sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: queueUrl,
          ReceiptHandle: stop.receiptHandle,
          VisibilityTimeout: 0,
        }),
      );
    }
    const dlq = rt.queue('chain-terminate').deadLetterQueue?.url ?? '';
    let body: string | undefined;
    const deadline = Date.now() + 30_000;
    while (body === undefined && Date.now() < deadline) {
      const out = await rt.sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq, WaitTimeSeconds: 1 }));
      body = out.Messages?.[0]?.Body;
    }
    expect(JSON.parse(body ?? '{}').data).toEqual({
      chain: 'terminate',
      hop: RECURSION_STOP_INVOCATIONS + 1,
      last: STEPS,
    });
    // Never run: no step 17 in the logs, and each delivery of it was counted as dropped.
    expect(steps('terminate').map((l) => l.hop)).not.toContain(RECURSION_STOP_INVOCATIONS + 1);
    expect(stops.map((s) => s.messageId)).toEqual([stops[0]?.messageId, stops[0]?.messageId]);
    expect(rt.stats().functions[worker.functionLogicalId]?.recursiveInvocationsDropped).toBe(2);
  }, 90_000);

  it('recorded one X-Ray subsegment per job run, with its type, key and outcome as annotations', async () => {
    const subsegments = await until(() => {
      const found = rt.traceSegments().filter((s) => s.name === '## chain.step');
      return found.length >= STEPS + RECURSION_STOP_INVOCATIONS && found;
    }, 'the subsegments of 36 jobs');
    expect(subsegments).toHaveLength(STEPS + RECURSION_STOP_INVOCATIONS);
    const roots = new Set(
      steps('allow')
        .concat(steps('terminate'))
        .map((l) => parseTraceHeader(String(l.traceHeader))?.root),
    );
    for (const s of subsegments) {
      expect(s.annotations).toMatchObject({ jobType: 'chain.step', outcome: 'completed' });
      expect(['chain-allow', 'chain-terminate']).toContain(s.annotations?.queue);
      expect(String(s.annotations?.jobKey)).not.toBe('');
      expect(roots.has(s.trace_id)).toBe(true);
      expect(s.metadata?.['sqs-jobs']?.job).toMatchObject({ envelope: { source: expect.any(String) } });
    }
  });

  it('chains that share batches each count their own steps: fresh 3-step chains batched with chains at step 16 all run whole', async () => {
    // The function's Lineage key, from the header of a one-step chain.
    await rt.sqs.send(
      new SendMessageCommand({ QueueUrl: rt.queue('chain-mixed').url, MessageBody: stepBody('probe', 1, 1) }),
    );
    const probe = await until(() => steps('probe')[0], 'the probe step');
    const key = parseTraceHeader(String(probe.traceHeader))?.lineage?.split(':')[0] ?? '';
    const veteranHeader = `Root=1-00000000-000000000000000000000016;Parent=53995c3f42cd8ad8;Sampled=0;Lineage=${key}:15`;
    // One SendMessageBatch: veterans (their chain already invoked the function 15 times; this is
    // their last, 16th step) and fresh chains of 3 steps, received together in batches.
    const entries = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0
        ? {
            Id: `veteran-${i}`,
            MessageBody: stepBody(`veteran-${i}`, 16, 16),
            MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: veteranHeader } },
          }
        : { Id: `fresh-${i}`, MessageBody: stepBody(`fresh-${i}`, 1, 3) },
    );
    await rt.sqs.send(
      new SendMessageBatchCommand({ QueueUrl: rt.queue('chain-mixed').url, Entries: entries }),
    );
    const mixedUrl = rt.queue('chain-mixed').url;
    const held = () => notes.filter((n) => n.includes(mixedUrl));
    const chains = entries.map((e) => e.Id);
    // Hops each chain ran, each once (no step outlasts the template's visibility timeout).
    const hops = (chain: string) => steps(chain).map((l) => Number(l.hop));
    const expected = (chain: string) => (chain.startsWith('fresh') ? [1, 2, 3] : [16]);
    await until(
      () => held().length > 0 || chains.every((c) => hops(c).join() === expected(c).join()),
      'every chain of the mixed batch to end',
    );
    expect(held()).toEqual([]);
    for (const chain of chains) expect(hops(chain)).toEqual(expected(chain));
    expect(
      rt.stats().functions[rt.worker('chain-mixed').functionLogicalId]?.recursiveInvocationsDropped,
    ).toBe(0);
  }, 90_000);
});
