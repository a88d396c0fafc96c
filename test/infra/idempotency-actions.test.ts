/**
 * Least privilege on the idempotency table: `IDEMPOTENCY_TABLE_ACTIONS` (what JobQueue grants a
 * worker) is exactly the DynamoDB commands the runtime sends, read from its sources, so the two
 * cannot drift apart: a new command in lib/runtime without its grant fails here, and so does a
 * grant nothing uses; and DeleteItem is sent only by the unpark of a FIFO group, which is why a
 * worker that cannot park is granted the rest without it. No synth: the synthesized grants are
 * checked in least-privilege.test.ts and job-queue.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  IDEMPOTENCY_TABLE_ACTIONS,
  IDEMPOTENCY_UNPARK_ACTIONS,
} from '../../lib/constructs/job-queue/defaults.ts';
import { sourceTexts } from './helpers.ts';

/** Each runtime source file's text, by path relative to lib/runtime. */
const sources = sourceTexts('lib/runtime');

/** Value (not type-only) names imported from `module` in `text`. */
function valueImports(text: string, module: string): string[] {
  const escaped = module.replaceAll('/', '\\/');
  const pattern = new RegExp(`import\\s+(type\\s+)?\\{([^}]*)\\}\\s*from\\s*['"]${escaped}['"]`, 'g');
  return [...text.matchAll(pattern)].flatMap((m) =>
    m[1] !== undefined
      ? []
      : m[2]!
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '' && !s.startsWith('type '))
          .map((s) => s.split(/\s+as\s+/)[0]!.trim()),
  );
}

/** `dynamodb:<Action>` for every `new <Action>Command(` whose class comes from @aws-sdk/client-dynamodb. */
function dynamoActionsSent(): string[] {
  const actions = new Set<string>();
  for (const text of sources.values()) {
    const commands = new Set(
      valueImports(text, '@aws-sdk/client-dynamodb').filter((name) => name.endsWith('Command')),
    );
    for (const m of text.matchAll(/new\s+(\w+)Command\s*\(/g)) {
      if (!commands.has(`${m[1]}Command`)) continue;
      // IAM checks a transaction's actions as the item actions they are (the runtime's: Put, Update).
      if (m[1] === 'TransactWriteItems')
        for (const a of ['PutItem', 'UpdateItem']) actions.add(`dynamodb:${a}`);
      else actions.add(`dynamodb:${m[1]}`);
    }
  }
  return [...actions].sort();
}

describe('idempotency table grant', () => {
  it('the runtime sends DeleteItem only to unpark a FIFO group, so a worker that cannot park is granted no DeleteItem', () => {
    expect([...IDEMPOTENCY_UNPARK_ACTIONS]).toEqual(['dynamodb:DeleteItem']);
    // The one DeleteItemCommand is the group store's unpark (sent through RecordTable.conditional,
    // so it lives with the parking feature, out of a worker that cannot park).
    const senders = [...sources].filter(([, text]) => /new\s+DeleteItemCommand\s*\(/.test(text));
    expect(senders.map(([file]) => file)).toEqual(['idempotency/group-store.ts']);
    expect(senders[0]![1]).toMatch(/\.conditional\('unpark',/);
    expect((senders[0]![1].match(/new\s+DeleteItemCommand\s*\(/g) ?? []).length).toBe(1);
  });

  it('the runtime reaches DynamoDB only through named command imports this scan can read', () => {
    for (const [file, text] of sources) {
      // A namespace import or the document client would hide commands from the scan below.
      expect(text, file).not.toMatch(/import\s+\*\s+as\s+\w+\s+from\s*['"]@aws-sdk\/client-dynamodb['"]/);
      expect(text, file).not.toMatch(/['"]@aws-sdk\/lib-dynamodb['"]/);
    }
    expect(dynamoActionsSent().length).toBeGreaterThan(0);
  });

  it('grants exactly the DynamoDB commands the runtime sends (BatchGetItem of batches, DeleteItem to unpark a FIFO group, GetItem, PutItem, UpdateItem)', () => {
    expect([...IDEMPOTENCY_TABLE_ACTIONS].sort()).toEqual(dynamoActionsSent());
    expect(dynamoActionsSent()).toEqual([
      'dynamodb:BatchGetItem',
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
  });
});
