/**
 * The same local runtime against a second, independent emulator: moto's server (PyPI
 * `moto[server]`), reached through `SQS_JOBS_ENDPOINT_URL` as a user would. Run by `npm run test:conformance`
 * (and by `.ci/run`, which installs moto into `.ci/.venv`); it fails, never skips, when
 * `moto_server` is not on the PATH.
 */
import { fileURLToPath } from 'node:url';
import { ReceiveMessageCommand, SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../lib/local/runtime.ts';
import { type MotoServer, startMotoServer } from '../factories/moto-server.ts';

const ASSEMBLY = fileURLToPath(new URL('../fixtures/local/assembly', import.meta.url));

describe('local runtime on moto server', () => {
  let moto: MotoServer | undefined;
  let rt: LocalRuntime;

  beforeAll(async () => {
    moto = await startMotoServer();
    const { endpoint } = moto;
    rt = await startLocalRuntime({
      assemblyDir: ASSEMBLY,
      synthesize: 'never',
      env: { SQS_JOBS_ENDPOINT_URL: endpoint },
      receiveWaitTimeSeconds: 1,
      prewarm: true,
    });
    // One delivery first, so the worker's first SDK calls (credentials, connections to the
    // Python server) are not timed against the fixture function's 1 s timeout in the test.
    await rt.sqs.send(
      new SendMessageCommand({
        QueueUrl: rt.queue('work').url,
        MessageBody: JSON.stringify({ id: 'warm', action: 'ok' }),
      }),
    );
    await rt.waitUntilDrained({ timeoutMs: 20_000 });
    await drainObservations();
  });

  /** Receives every observation the fixture function reported, as `id#receiveCount`. */
  async function drainObservations(): Promise<string[]> {
    const seen: string[] = [];
    for (;;) {
      const out = await rt.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: rt.queue('ObservationsE1E2E3E4').url,
          MaxNumberOfMessages: 10,
        }),
      );
      if (!out.Messages?.length) return seen;
      for (const m of out.Messages) {
        const o = JSON.parse(m.Body ?? '{}') as { id: string; receiveCount: number };
        seen.push(`${o.id}#${o.receiveCount}`);
      }
    }
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
    await rt.waitUntilDrained({ timeoutMs: 20_000 });
    const seen = await drainObservations();
    // First delivery: a succeeds, b reports a failure, and the response is lost: nothing is
    // deleted. Second delivery: both succeed (b fails on its first receive only) and are deleted.
    expect(seen.sort()).toEqual(['a#1', 'a#2', 'b#1', 'b#2']);
    expect(rt.stats().totals).toMatchObject({ lostResponses: 1, recordsDeleted: 3 }); // 2 + the warm-up
  });
});
