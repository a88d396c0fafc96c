/**
 * The test kit from the installed tarball: examples/testing, a user's job and worker tested with
 * `sqs-jobs/testing`, type-checks and passes under vitest and under jest (ESM mode, @swc/jest),
 * each run by the example's own scripts on the machine's Node.
 */
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { expectSuccess, report, run, seconds } from './support.ts';

const { testing } = inject('consumers');

/** Output without its colour codes (the runners may colour their summaries). */
const plain = (text: string): string => stripVTControlCharacters(text);

describe('examples/testing (sqs-jobs/testing from the tarball)', () => {
  it('type-checks against the published types', async () => {
    const result = expectSuccess(
      'npm run typecheck',
      await run('npm', ['run', 'typecheck'], { cwd: testing }),
    );
    report(`examples/testing typecheck: ${seconds(result.ms)}`);
  });

  it('passes its vitest tests', async () => {
    const result = expectSuccess(
      'npm run test:vitest',
      await run('npm', ['run', 'test:vitest'], { cwd: testing }),
    );
    report(`examples/testing vitest: ${seconds(result.ms)}`);
    expect(plain(result.stdout)).toMatch(/Tests\s+7 passed \(7\)/);
  });

  it('passes its jest tests', async () => {
    const result = expectSuccess(
      'npm run test:jest',
      await run('npm', ['run', 'test:jest'], { cwd: testing }),
    );
    report(`examples/testing jest: ${seconds(result.ms)}`);
    // jest prints its summary on stderr.
    expect(plain(result.stderr)).toMatch(/Tests:\s+3 passed, 3 total/);
  });
});
