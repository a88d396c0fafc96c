/**
 * Least privilege on the idempotency table: `IDEMPOTENCY_TABLE_ACTIONS` (what JobQueue grants a
 * worker) is exactly the DynamoDB commands the runtime sends, read from its sources, so the two
 * cannot drift apart: a new command in lib/runtime without its grant fails here, and so does a
 * grant nothing uses. No synth: the synthesized grant is checked in job-queue.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { IDEMPOTENCY_TABLE_ACTIONS } from '../../lib/constructs/job-queue/defaults.ts';

const RUNTIME_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'lib', 'runtime');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.[cm]?ts$/.test(entry.name) ? [full] : [];
  });
}

/** Each runtime source file's text, by path relative to lib/runtime. */
const sources = new Map(
  sourceFiles(RUNTIME_DIR).map((file) => [path.relative(RUNTIME_DIR, file), fs.readFileSync(file, 'utf8')]),
);

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
      if (commands.has(`${m[1]}Command`)) actions.add(`dynamodb:${m[1]}`);
    }
  }
  return [...actions].sort();
}

describe('idempotency table grant', () => {
  it('the runtime reaches DynamoDB only through named command imports this scan can read', () => {
    for (const [file, text] of sources) {
      // A namespace import or the document client would hide commands from the scan below.
      expect(text, file).not.toMatch(/import\s+\*\s+as\s+\w+\s+from\s*['"]@aws-sdk\/client-dynamodb['"]/);
      expect(text, file).not.toMatch(/['"]@aws-sdk\/lib-dynamodb['"]/);
    }
    expect(dynamoActionsSent().length).toBeGreaterThan(0);
  });

  it('grants exactly the DynamoDB commands the runtime sends (DeleteItem to unpark a FIFO group, GetItem, PutItem, UpdateItem)', () => {
    expect([...IDEMPOTENCY_TABLE_ACTIONS].sort()).toEqual(dynamoActionsSent());
    expect(dynamoActionsSent()).toEqual([
      'dynamodb:DeleteItem',
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
  });
});
