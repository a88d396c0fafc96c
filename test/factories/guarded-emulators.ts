/**
 * Worker integration tests against the emulators with the default idempotency store: the SQS
 * emulator (emulated-sqs.ts) and dynalite with one idempotency table, and the AWS environment the
 * worker's DynamoDB client reads (endpoint, region, credentials), restored after the test file.
 *
 * @example
 * const env = useGuardedEmulators(); // registers beforeAll / afterAll
 * it('...', async () => { const queue = await env.emulator.createQueue('q', false); ... });
 */
import { afterAll, beforeAll } from 'vitest';
import { type DynaliteHandle, startDynalite } from '../support/dynalite.ts';
import { type EmulatedSqs, startEmulatedSqs } from './emulated-sqs.ts';

const ENV_KEYS = [
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_REGION',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
] as const;

/** What the hooks start; read inside tests (filled by `beforeAll`). */
export interface GuardedEmulators {
  readonly emulator: EmulatedSqs;
  readonly db: DynaliteHandle;
  /** The idempotency table (`JOBS_IDEMPOTENCY_TABLE`). */
  readonly tableName: string;
}

/** Registers the file's `beforeAll` / `afterAll` and returns their state. */
export function useGuardedEmulators(): GuardedEmulators {
  const state = {} as { emulator: EmulatedSqs; db: DynaliteHandle; tableName: string };
  const saved: Partial<Record<(typeof ENV_KEYS)[number], string | undefined>> = {};
  beforeAll(async () => {
    [state.emulator, state.db] = await Promise.all([startEmulatedSqs(), startDynalite()]);
    state.tableName = await state.db.createTable();
    for (const key of ENV_KEYS) saved[key] = process.env[key];
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_DYNAMODB: state.db.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
    });
  });
  afterAll(async () => {
    for (const key of ENV_KEYS) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
    await Promise.all([state.emulator?.stop(), state.db?.stop()]);
  });
  return state;
}
