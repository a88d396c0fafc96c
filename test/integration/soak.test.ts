/**
 * `npm run soak` as a user runs it, small: a child process on bin/start.ts --soak with about 100
 * jobs and the kill and overrun faults turned up so each kind shows even in a small run. The
 * assertions read the JSON report at the end (no timing assertion: on a busy machine the run only
 * takes longer; the deadline is generous and the test waits for the process to exit).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { FaultProxyStats } from '../../lib/local/fault-proxy.ts';
import type { RunReport } from '../../lib/sample/report/index.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function soak(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts', '--soak', ...args], {
      cwd: ROOT,
      env: { ...process.env, SQS_JOBS_FUNCTION_LOGS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm run soak (small)', () => {
  it('runs ~100 jobs with every fault kind on and every invariant holds', async () => {
    const { code, stdout, stderr } = await soak([
      '--jobs',
      '100',
      '--kill-rate',
      '0.15',
      '--overrun-rate',
      '0.1',
      '--timeout-seconds',
      '1200',
      '--json',
    ]);
    expect(code, stderr.slice(-2_000)).toBe(0);
    const out = JSON.parse(stdout) as { report: RunReport; awsFaults: FaultProxyStats };
    const { report, awsFaults } = out;
    expect(report.ok).toBe(true);
    const names = report.invariants.map((i) => i.name);
    expect(names).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^jobs lost/),
        expect.stringMatching(/^dead letters without evidence/),
        expect.stringMatching(/^idempotency records IN_PROGRESS past their lease/),
        expect.stringMatching(/^per-user order violations/),
        expect.stringMatching(/^completion jobs run exactly once/),
        expect.stringMatching(/^batches still open once the queues drained/),
      ]),
    );
    for (const i of report.invariants)
      if (i.severity === 'invariant') expect(i, i.name).toMatchObject({ ok: true });
    // sent + enqueued = completed + dead-lettered.
    expect(report.jobs.total).toBeGreaterThanOrEqual(95);
    expect(report.jobs.completed + report.jobs.deadLettered).toBe(report.jobs.total);
    expect(report.idempotency?.stuckInProgress).toBe(0);
    // Each kind of fault showed up.
    const byKind = report.faultsInjected.byKind;
    expect(byKind['worker killed after side effect']).toBeGreaterThan(0);
    expect(byKind['API overrun (past the job time limit)']).toBeGreaterThan(0);
    expect(byKind['malformed message']).toBeGreaterThan(0);
    expect(byKind['producer resend']).toBeGreaterThan(0);
    const dynamo = Object.entries(awsFaults.faults).filter(([k]) => k.startsWith('dynamodb'));
    const sqs = Object.entries(awsFaults.faults).filter(([k]) => k.startsWith('sqs'));
    expect(dynamo.reduce((a, [, n]) => a + n, 0)).toBeGreaterThan(0);
    expect(sqs.reduce((a, [, n]) => a + n, 0)).toBeGreaterThan(0);
    expect(report.latencyP99Ms).toBeGreaterThan(0);
  }, 1_500_000);

  it('refuses --jobs with --users, and an overrun the client timeout would cut first', async () => {
    const both = await soak(['--jobs', '100', '--users', '5']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--jobs sets --users/);
    const cut = await soak(['--external-timeout-ms', '5000']);
    expect(cut.code).toBe(2);
    expect(cut.stderr).toMatch(/--overrun-rate needs --external-timeout-ms above 11000/);
  }, 60_000);
});
