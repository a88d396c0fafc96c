/** Rule group `idempotency`: a table, or `false` on purpose (what the runtime needs to run). */
import { App, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { IdempotencyTable } from '../../../lib/constructs/idempotency-table.ts';
import { idempotencyRule } from '../../../lib/constructs/job-queue/rules/idempotency.ts';
import { errors } from './helpers.ts';

describe('idempotency rule', () => {
  const table = new IdempotencyTable(new Stack(new App(), 'Rules'), 'Idempotency');

  it('accepts a DynamoDB table, or false (createWorker({ idempotency: false }) or a custom guard)', () => {
    expect(errors(idempotencyRule, { idempotencyTable: table.table })).toEqual([]);
    expect(errors(idempotencyRule, { idempotencyTable: false })).toEqual([]);
  });

  it('refuses a worker with no table and no explicit opt-out: the runtime would fail every record', () => {
    const [line, ...rest] = errors(idempotencyRule, { idempotencyTable: undefined });
    expect(rest).toEqual([]);
    expect(line).toMatch(/^idempotencyTable: required: /);
    expect(line).toMatch(/reports every record failed/);
    expect(line).toMatch(/false when the entry runs createWorker\(\{ idempotency: false \}\)/);
  });

  it('refuses the IdempotencyTable construct itself, and anything else, with what to pass', () => {
    expect(errors(idempotencyRule, { idempotencyTable: table })).toEqual([
      'idempotencyTable: got an IdempotencyTable construct: pass its .table',
    ]);
    expect(errors(idempotencyRule, { idempotencyTable: 'my-table' })).toEqual([
      'idempotencyTable: must be a DynamoDB table (IdempotencyTable .table) or false',
    ]);
  });
});
