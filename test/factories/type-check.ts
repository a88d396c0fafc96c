/**
 * Runs the repo's tsc (TypeScript 7 is native: no JS API) on files written into a temporary
 * project inside the repo (so `sqs-jobs` resolves to lib/ through tsconfig paths): for tests of
 * what a user's code compiles to, or the compile error a user reads.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('../../', import.meta.url).pathname;

/** tsc's exit status and output (`file(line,col): error TSnnnn: message` lines). */
export interface TypeCheckResult {
  readonly status: number | null;
  readonly output: string;
}

/** Type-checks `files` (name → source) with the repo's tsconfig; `label` names the temporary folder. */
export function typeCheck(files: Readonly<Record<string, string>>, label: string): TypeCheckResult {
  const dir = join(root, `.type-check-${label}-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  try {
    for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), `${source}\n`);
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({ extends: '../tsconfig.json', include: ['*.ts'] }),
    );
    const tsc = spawnSync(join(root, 'node_modules', '.bin', 'tsc'), ['--noEmit', '-p', dir], {
      cwd: root,
      encoding: 'utf8',
    });
    return { status: tsc.status, output: `${tsc.stdout}${tsc.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
