/**
 * The record path fuzzed with deep, wide and huge bodies (test/support/record-fuzz.ts), in a child
 * process on the stack of Lambda's Node main thread (V8's default 984 KB; see that file), not on a
 * vitest worker's: every record ends completed or dead-lettered with evidence on its first
 * delivery, none reported failed (issue 22, "Poison is permanent"). The issue's 100,000-record run:
 * `node --stack-size=984 --import tsx test/support/record-fuzz.ts 100000`.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Enough to meet every generator (deep to 600,000 levels, 1 MiB bodies) in a unit-test's time. */
const RECORDS = 400;

interface FuzzReport {
  readonly records: number;
  readonly outcomes: Record<string, number>;
  readonly problems: readonly string[];
  readonly seed: number;
}

function runFuzz(records: number): Promise<{ code: number | null; report: FuzzReport; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--stack-size=984', '--import', 'tsx', 'test/support/record-fuzz.ts', String(records)],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? '';
      try {
        resolve({ code, report: JSON.parse(last) as FuzzReport, stderr });
      } catch {
        reject(
          new Error(
            `the fuzz printed no report (exit ${code})\n${stdout.slice(-2_000)}\n${stderr.slice(-2_000)}`,
          ),
        );
      }
    });
  });
}

describe('record path fuzz on the Lambda main-thread stack', () => {
  it('accounts for every generated record: completed or dead-lettered with evidence, none cycling', async () => {
    const { code, report } = await runFuzz(RECORDS);
    expect(report.problems, `seed ${report.seed}`).toEqual([]);
    expect(code).toBe(0);
    expect(report.records).toBeGreaterThanOrEqual(RECORDS * 0.5);
    expect(Object.keys(report.outcomes).sort()).toEqual(
      expect.arrayContaining(['completed', 'dead-lettered']),
    );
    expect(report.outcomes.retry).toBeUndefined();
  }, 180_000);
});
