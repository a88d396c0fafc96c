/**
 * `npm start` as a user runs it: a child process on bin/start.ts, a small workload, the JSON
 * report on stdout, the exit code.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { RunReport } from '../../lib/local/report.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function start(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // process.execPath is the Node 24 of the devDependencies when the tests run through npm/npx.
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm start', () => {
  it('documents every flag in --help', async () => {
    const { code, stdout } = await start(['--help']);
    expect(code).toBe(0);
    for (const flag of [
      '--users',
      '--bookings-per-user',
      '--seed',
      '--fault-rate',
      '--timeout-rate',
      '--throttle-rate',
      '--unavailable-rate',
      '--bad-request-rate',
      '--slow-rate',
      '--lost-response-rate',
      '--visibility-timeout-seconds',
      '--out-of-stock',
      '--malformed',
      '--duplicates',
      '--timeout-seconds',
      '--endpoint',
      '--json',
    ]) {
      expect(stdout).toContain(flag);
    }
    expect(stdout).toContain('SQS_JOBS_ENDPOINT_URL');
  }, 30_000);

  it('refuses a bad flag value with exit code 2 and a message naming it', async () => {
    const { code, stderr } = await start(['--fault-rate', '1.5']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--fault-rate.*must be a number from 0 to 1/);
  }, 30_000);

  it('runs a small faulty workload end to end and exits 0 with a passing JSON report', async () => {
    const { code, stdout, stderr } = await start([
      '--users',
      '4',
      '--bookings-per-user',
      '2',
      '--fault-rate',
      '0.2',
      '--bad-request-rate',
      '0',
      // Lost responses are covered by sample-lost-response.test.ts; here they would only add waiting.
      '--lost-response-rate',
      '0',
      '--duplicates',
      '2',
      '--seed',
      '3',
      '--timeout-seconds',
      '90',
      '--json',
    ]);
    expect(code, stderr).toBe(0);
    const { report } = JSON.parse(stdout) as { report: RunReport };
    expect(report.ok).toBe(true);
    // 8 bookings: 1 malformed of each kind, 2 sold out (1 job each), 6 good (5 jobs each).
    expect(report.jobs).toMatchObject({ total: 6 * 5 + 2 + 3, lost: 0, deadLettered: 5 });
    expect(report.deadLetters.unexplained).toBe(0);
    expect(report.sideEffects.maxPerKey).toBe(1);
    expect(report.order.violations).toEqual([]);
    expect(report.faultsInjected.byKind['producer resend']).toBe(2);
    expect(report.duplicatesAbsorbed).toBeGreaterThanOrEqual(2);
    // Progress went to stderr, so stdout is the JSON alone.
    expect(stderr).toContain('running');
  }, 180_000);
});
