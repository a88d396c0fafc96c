/**
 * The store's transactions (lib/runtime/idempotency/transactions.ts, `transact`) against a fake DynamoDB
 * client: a cancellation by a failed condition is a result naming each item's reason; one by
 * `TransactionConflict` (another transaction writing the same item: children of one batch counted
 * at once) is sent again with a token of its own until it goes through, and thrown as a store
 * failure (transient) when it keeps conflicting.
 */
import { TransactionCanceledException, type TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { IdempotencyStoreError } from '../../lib/runtime/idempotency/errors.ts';
import { RecordTable } from '../../lib/runtime/idempotency/table.ts';
import { TRANSACTION_CONFLICT_TRIES, transact } from '../../lib/runtime/idempotency/transactions.ts';

function cancelled(...codes: string[]): TransactionCanceledException {
  return new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
}

/** A client whose TransactWriteItems answers come from `answers`, in order; records the tokens. */
function fakeTable(answers: (Error | undefined)[]) {
  const tokens: string[] = [];
  const client = {
    async send(command: TransactWriteItemsCommand) {
      tokens.push(command.input.ClientRequestToken ?? '');
      const answer = answers.shift();
      if (answer) throw answer;
      return {};
    },
  };
  return { table: new RecordTable(client as never, 'jobs'), tokens };
}

const items = [
  { Update: { TableName: 'jobs', Key: { pk: { S: 'batch#b' } }, UpdateExpression: 'ADD n :1' } },
];

describe('transact', () => {
  it('answers a failed condition with each item reason, sent once', async () => {
    const { table, tokens } = fakeTable([cancelled('None', 'ConditionalCheckFailed')]);
    expect(await transact(table, 'count', 'batch#b', items, 'token-1')).toEqual({
      ok: false,
      reasons: ['None', 'ConditionalCheckFailed'],
    });
    expect(tokens).toEqual(['token-1']);
  });

  it('sends a transaction cancelled by TransactionConflict again, with a token per try', async () => {
    const { table, tokens } = fakeTable([
      cancelled('None', 'TransactionConflict'),
      cancelled('TransactionConflict'),
      undefined,
    ]);
    expect(await transact(table, 'count', 'batch#b', items, 'a'.repeat(36), () => 0)).toEqual({ ok: true });
    expect(tokens).toEqual(['a'.repeat(36), `${'a'.repeat(33)}-2`, `${'a'.repeat(33)}-3`]);
  });

  it('throws a store failure when the conflict lasts', async () => {
    const answers = Array.from({ length: TRANSACTION_CONFLICT_TRIES }, () =>
      cancelled('TransactionConflict'),
    );
    const { table, tokens } = fakeTable(answers);
    await expect(transact(table, 'count', 'batch#b', items, 't', () => 0)).rejects.toBeInstanceOf(
      IdempotencyStoreError,
    );
    expect(tokens).toHaveLength(TRANSACTION_CONFLICT_TRIES);
  });
});
