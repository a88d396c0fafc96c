/**
 * examples/migrate-from-powertools installed from the packed tarball: the before/after of
 * docs/migrate-from-powertools.md. The same producers (a plain JSON body sent twice, an order
 * published to an SNS topic with raw message delivery off and delivered twice) run through the
 * Powertools `BatchProcessor` + `makeIdempotent` consumer, then through the sqs-jobs worker that
 * replaces it (the job's `raw` option): each order is charged once both times; after, a
 * `JobClient` producer's envelope sent twice runs once too, and a message without an order id is
 * dead-lettered with evidence naming the missing field, its body kept.
 */
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { consumerEnv, expectSuccess, REPO_ROOT, report, run, seconds } from './support.ts';

const { migrateFromPowertools } = inject('consumers');
/** The bundled Node 24: fauxqs, which the example runs its queues on, needs Node >= 22.5. */
const NODE_24 = join(REPO_ROOT, 'node_modules', '.bin', 'node');

interface BeforeAfterReport {
  readonly snsNotification: { readonly type: string; readonly messageIsString: boolean };
  readonly before: { readonly charges: Record<string, number> };
  readonly after: {
    readonly charges: Record<string, number>;
    readonly deadLetters: readonly { body: string; errorName?: string; errorMessage?: string }[];
  };
}

describe('examples/migrate-from-powertools installed from the tarball', () => {
  it('typechecks: the Powertools consumer, the sqs-jobs worker and the runner', async () => {
    expectSuccess(
      'tsc --noEmit',
      await run('npx', ['tsc', '--noEmit'], { cwd: migrateFromPowertools, env: consumerEnv() }),
    );
  });

  it('before and after, producers unchanged: raw and SNS-wrapped orders charged once each, duplicates absorbed', async () => {
    const result = expectSuccess(
      'npm run before-after',
      await run(NODE_24, ['--import', 'tsx', 'before-after.ts'], {
        cwd: migrateFromPowertools,
        env: consumerEnv(),
      }),
    );
    report(`migrate-from-powertools before/after: ${seconds(result.ms)}`);
    const lines = result.stdout.trim().split('\n');
    const out = JSON.parse(lines[lines.length - 1] ?? '{}') as BeforeAfterReport;
    // The queue really got SNS notifications (raw delivery off): `Message` a string inside.
    expect(out.snsNotification).toEqual({ type: 'Notification', messageIsString: true });
    expect(out.before.charges).toEqual({ 'before-o-1': 1, 'before-o-2': 1 });
    expect(out.after.charges).toEqual({ 'after-o-1': 1, 'after-o-2': 1, 'after-o-3': 1 });
    expect(out.after.deadLetters).toEqual([
      {
        body: JSON.stringify({ totalCents: 1 }),
        errorName: 'RawMessageError',
        errorMessage: expect.stringMatching(/orderId must be a non-empty string .*: it is missing$/),
      },
    ]);
  });
});
