/**
 * `sqs-jobs stats --limits-table`: the flow-control limits kept in an idempotency table (dynalite),
 * next to the queue counts (SQS emulator): running jobs against each concurrency key's limit, a
 * crashed holder shown as expired, each rate limit's current rate (lowered by a throttling report)
 * against its declared one; in text and in --json.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { defineRateLimit } from '../../lib/runtime/limits/rate-limit.ts';
import { LimitStore } from '../../lib/runtime/limits/store.ts';
import { runCli } from '../factories/cli.ts';
import { useGuardedEmulators } from '../factories/guarded-emulators.ts';

const env = useGuardedEmulators();
let queueUrl: string;

beforeAll(async () => {
  queueUrl = (await env.emulator.createQueue('limited', false)).url;
  const limits = new LimitStore({ tableName: env.tableName, client: env.db.client });
  const slot = { name: 'reports.build', key: 'tenant#1', limit: 2 };
  await limits.slots.acquire({ ...slot, expiresAtMs: Date.now() + 60_000 });
  await limits.slots.acquire({ ...slot, expiresAtMs: Date.now() - 60_000 }); // a crashed run's
  const partner = defineRateLimit({ name: 'partner-api', perSecond: 20, burst: 40 });
  await limits.buckets.take(partner, 'tenant-2');
  await limits.buckets.throttled(partner, 'tenant-2');
});

describe('sqs-jobs stats --limits-table', () => {
  const args = () => [
    'stats',
    '--queue-url',
    queueUrl,
    '--endpoint',
    env.emulator.endpoint,
    '--dynamodb-endpoint',
    env.db.endpoint,
    '--limits-table',
    env.tableName,
  ];

  it('lists each limit after the queues: holders against the limit, the lowered rate against the declared one', async () => {
    const { code, stdout } = await runCli(args(), env.emulator.endpoint);
    expect(code).toBe(0);
    expect(stdout).toContain(`flow-control limits in table ${env.tableName}:`);
    expect(stdout).toContain(
      '  concurrency reports.build [tenant#1]: 1 running of 2, 1 expired (crashed runs)',
    );
    expect(stdout).toMatch(
      / {2}rate partner-api \[tenant-2\]: 10\.00\/s of 20\.00\/s, 0\.0 tokens at the last refill, last lowered by throttling \d+ s ago/,
    );
  });

  it('a --limits-table that does not exist is one line naming it and what to check, exit code 2, no stack trace', async () => {
    const { code, stdout, stderr } = await runCli(
      [...args().slice(0, -1), 'NoSuchTable'],
      env.emulator.endpoint,
    );
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      `error: no idempotency table named "NoSuchTable" at ${env.db.endpoint}: check --limits-table (the stack output IdempotencyTableName) and the region\n`,
    );
  });

  it('adds them to --json as `limits`', async () => {
    const { code, stdout } = await runCli([...args(), '--json'], env.emulator.endpoint);
    expect(code).toBe(0);
    const json = JSON.parse(stdout) as { limits: { table: string; rows: { kind: string; name: string }[] } };
    expect(json.limits.table).toBe(env.tableName);
    expect(json.limits.rows.map((row) => [row.kind, row.name])).toEqual([
      ['concurrency', 'reports.build'],
      ['rate', 'partner-api'],
    ]);
  });
});
