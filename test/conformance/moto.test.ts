/**
 * The same local runtime against a second, independent emulator: moto's server (PyPI
 * `moto[server]`), reached through `SQS_JOBS_ENDPOINT_URL` as a user would. Run by `npm run test:conformance`
 * (and by `.ci/run`, which installs moto into `.ci/.venv`); it fails, never skips, when
 * `moto_server` is not on the PATH.
 */
import { fileURLToPath } from 'node:url';
import {
  ChangeMessageVisibilityCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvocationReport } from '../../lib/local/event-source-mapping.ts';
import { type LocalRuntime, startLocalRuntime } from '../../lib/local/runtime.ts';
import { type MotoServer, startMotoServer } from '../factories/moto-server.ts';

const ASSEMBLY = fileURLToPath(new URL('../fixtures/local/assembly', import.meta.url));

describe('local runtime on moto server', () => {
  let moto: MotoServer | undefined;
  let rt: LocalRuntime;
  const reports: InvocationReport[] = [];

  beforeAll(async () => {
    moto = await startMotoServer();
    const { endpoint } = moto;
    rt = await startLocalRuntime({
      assemblyDir: ASSEMBLY,
      synthesize: 'never',
      env: { SQS_JOBS_ENDPOINT_URL: endpoint },
      receiveWaitTimeSeconds: 1,
      prewarm: true,
      onInvocation: (r) => reports.push(r),
    });
    // One delivery first, so the worker's first SDK calls (credentials, connections to the
    // Python server) are not timed against the fixture function's 10 s timeout in the test.
    await rt.sqs.send(
      new SendMessageCommand({
        QueueUrl: rt.queue('work').url,
        MessageBody: JSON.stringify({ id: 'warm', action: 'ok' }),
      }),
    );
    await rt.waitUntilDrained({ timeoutMs: 20_000 });
    await drainObservations();
  });

  /** What the fixture function reports for each record it handles. */
  interface Observation {
    readonly id: string;
    readonly receiveCount: number;
    readonly record: { readonly receiptHandle: string };
  }

  /** Receives every observation the fixture function reported since the last call. */
  async function drainObservationRecords(): Promise<Observation[]> {
    const seen: Observation[] = [];
    for (;;) {
      const out = await rt.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: rt.queue('ObservationsE1E2E3E4').url,
          MaxNumberOfMessages: 10,
        }),
      );
      if (!out.Messages?.length) return seen;
      for (const m of out.Messages) seen.push(JSON.parse(m.Body ?? '{}') as Observation);
    }
  }

  /** Receives every observation the fixture function reported, as `id#receiveCount`. */
  async function drainObservations(): Promise<string[]> {
    return (await drainObservationRecords()).map((o) => `${o.id}#${o.receiveCount}`);
  }

  afterAll(async () => {
    await rt?.stop();
    moto?.stop();
  });

  it('creates the stack on the external endpoint, with nothing embedded', () => {
    expect(rt.endpoints.embedded).toEqual({ sqs: false, dynamodb: false });
    expect(rt.queue('work').deadLetterQueue?.maxReceiveCount).toBe(2);
    expect(rt.queue('ordered').name).toBe('FixtureStack-ordered.fifo');
    expect(rt.tables.map((t) => t.name).sort()).toEqual([
      'FixtureStack-DomainTableF0E1D2C3',
      'FixtureStack-StateTableA1B2C3D4',
    ]);
    expect(rt.worker('work').env.AWS_ENDPOINT_URL).toBe(rt.endpoints.sqs);
  });

  it('deletes successes, redelivers reported failures and lost responses', async () => {
    rt.loseNextResponses('work', 1);
    await rt.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: rt.queue('work').url,
        Entries: [
          { Id: 'a', MessageBody: JSON.stringify({ id: 'a', action: 'ok' }) },
          { Id: 'b', MessageBody: JSON.stringify({ id: 'b', action: 'failOnce' }) },
        ],
      }),
    );
    // The batch whose response is lost stays on the queue for the fixture's 60 s visibility
    // timeout; once the runtime has settled it, `a` is made visible at once instead (b already is:
    // the fixture does that for a failure). A record the runtime deleted could not come back.
    const deadline = Date.now() + 20_000;
    while (!reports.some((r) => r.outcome === 'lost')) {
      if (Date.now() > deadline) throw new Error('timed out waiting for the lost invocation');
      await new Promise((r) => setTimeout(r, 50));
    }
    const first = await drainObservationRecords();
    const a = first.find((o) => o.id === 'a' && o.receiveCount === 1);
    await rt.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: rt.queue('work').url,
        ReceiptHandle: a?.record.receiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    await rt.waitUntilDrained({ timeoutMs: 20_000 });
    const seen = [...first.map((o) => `${o.id}#${o.receiveCount}`), ...(await drainObservations())];
    // First delivery: a succeeds, b reports a failure, and the response is lost: nothing is
    // deleted. Second delivery: both succeed (b fails on its first receive only) and are deleted.
    expect(seen.sort()).toEqual(['a#1', 'a#2', 'b#1', 'b#2']);
    expect(rt.stats().totals).toMatchObject({ lostResponses: 1, recordsDeleted: 3 }); // 2 + the warm-up
  });
});
