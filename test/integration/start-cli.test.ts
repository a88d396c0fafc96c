/**
 * `npm start` as a user runs it: a child process on bin/start.ts, a small workload, the JSON
 * report on stdout, the exit code, Ctrl-C. Its flags, help and refusals are tested in process
 * (test/unit/start-cli.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { RunReport } from '../../lib/sample/report/index.ts';
import { runScript, type ScriptOptions, type ScriptRun } from '../factories/script-process.ts';

function start(
  args: readonly string[],
  env: Record<string, string | undefined> = {},
  /** Sees stderr as it grows, with the child: e.g. to press Ctrl-C at a given moment. */
  onStderr?: ScriptOptions['onStderr'],
): Promise<ScriptRun> {
  return runScript(['bin/start.ts', ...args], {
    env: {
      SQS_JOBS_ENDPOINT_URL: undefined,
      SQS_JOBS_SQS_ENDPOINT: undefined,
      SQS_JOBS_DYNAMODB_ENDPOINT: undefined,
      SQS_JOBS_DEBUG: undefined,
      ...env,
    },
    ...(onStderr ? { onStderr } : {}),
  });
}

describe('npm start', () => {
  it('exits 2 with "not finished", not lost, when the deadline comes before the queues drain', async () => {
    const { code, stdout, stderr } = await start([
      '--users',
      '20',
      '--timeout-seconds',
      '1',
      '--lost-response-rate',
      '0',
      '--json',
    ]);
    expect(code, stderr).toBe(2);
    const { report } = JSON.parse(stdout) as { report: RunReport };
    expect(report).toMatchObject({ ok: false, failed: false, complete: false, timedOut: true });
    expect(report.jobs.lost).toBe(0);
    expect(report.jobs.unfinished).toBeGreaterThan(0);
    expect(stderr).toContain(
      `error: not finished: the deadline of 1 s (--timeout-seconds) was reached with ${report.jobs.unfinished} jobs still queued/in flight`,
    );
    expect(stderr).toContain('Raise --timeout-seconds');
  }, 180_000);

  it('Ctrl-C while jobs run prints the partial report (pending jobs not finished, none lost) and exits 130', async () => {
    let pressed = false;
    const { code, stdout, stderr } = await start(
      ['--users', '30', '--lost-response-rate', '0', '--timeout-seconds', '600', '--json'],
      {},
      (text, child) => {
        // The first progress line of the waiting phase: jobs have been sent and are running.
        if (!pressed && /\brunning\b.*sent [1-9]/.test(text)) {
          pressed = true;
          child.kill('SIGINT');
        }
      },
    );
    expect(pressed).toBe(true);
    expect(code, stderr).toBe(130);
    const { report } = JSON.parse(stdout) as { report: RunReport };
    expect(report.jobs.lost).toBe(0);
    expect(report.jobs.completed + report.jobs.deadLettered + report.jobs.unfinished).toBe(report.jobs.total);
    expect(report.interrupted).toBe(true);
    expect(stderr).toContain('interrupted: collecting a partial report');
    expect(stderr).toContain('interrupted: the report above is partial');
    expect(stderr).not.toMatch(/Database is closed|Error: /);
  }, 180_000);

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
    expect(report).toMatchObject({ ok: true, complete: true, failed: false });
    expect(report.jobs.unfinished).toBe(0);
    // 8 bookings: 1 malformed of each kind, 2 sold out (1 job each), 6 good (5 jobs each).
    expect(report.jobs).toMatchObject({ total: 6 * 5 + 2 + 3, lost: 0, deadLettered: 5 });
    expect(report.deadLetters.unexplained).toBe(0);
    expect(report.sideEffects.maxPerKey).toBe(1);
    expect(report.order.violations).toEqual([]);
    expect(report.faultsInjected.byKind['producer resend']).toBe(2);
    expect(report.duplicatesAbsorbed).toBeGreaterThanOrEqual(2);
    // Progress went to stderr, so stdout is the JSON alone.
    expect(stderr).toContain('running');
    // The planned total from the first line on (the plan knows it), not "of ~0" until jobs run.
    expect(stderr).toMatch(/ seeding +sent 0, completed 0, dead-lettered 0 of ~35 jobs/);
    expect(stderr).toMatch(/ sending +sent \d+, completed \d+, dead-lettered \d+ of ~35 jobs/);
    expect(stderr).not.toContain('of ~0 jobs');
  }, 180_000);
});
