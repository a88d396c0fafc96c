/**
 * The end of a run with a workload: the report on stdout (text, or JSON with the workers'
 * metrics, invocation totals and the fault rates in force) and the exit code it means.
 */
import type { FaultRates } from '../../sample/external-service.ts';
import { awsFaultRatesFor } from '../../sample/presets.ts';
import { renderReport, unfinishedMessage } from '../../sample/report/index.ts';
import type { LocalRunResult } from '../../sample/workload.ts';
import type { StartFlags } from './flags.ts';
import type { StartIo } from './io.ts';

/**
 * Prints the report (text, or JSON: pretty, or on one line when `oneLine`, because the kept
 * stack's description follows as a second JSON line) and, on stderr, what the exit code means.
 * @returns the report's exit code: 0 every invariant holds, 1 one failed, 2 the deadline came
 *   first, 130 interrupted (a failed invariant wins over the last two).
 */
export function printReport(
  io: StartIo,
  result: LocalRunResult,
  flags: StartFlags,
  faults: FaultRates,
  oneLine: boolean,
): number {
  if (flags.json) {
    const { report, notes, metrics, runtime, awsFaults } = result;
    const document = {
      report,
      notes,
      workerMetrics: metrics,
      invocations: runtime.totals,
      faultRates: faults,
      ...(awsFaults
        ? { awsFaultRates: awsFaultRatesFor(flags.dynamodbFaultRate, flags.sqsFaultRate), awsFaults }
        : {}),
    };
    io.stdout.write(`${oneLine ? JSON.stringify(document) : JSON.stringify(document, null, 2)}\n`);
  } else {
    io.stdout.write('\n');
    for (const note of result.notes) io.stdout.write(`note: ${note}\n`);
    io.stdout.write(`\n${renderReport(result.report, { timeoutSeconds: flags.timeoutSeconds })}`);
  }
  // A checked invariant that fails is a real failure even in an unfinished run; otherwise a run
  // that hit the deadline could not complete (exit 2), with what to do about it.
  if (result.report.failed) return 1;
  if (result.workload.interrupted) {
    io.stderr.write(
      'interrupted: the report above is partial (jobs still queued or in flight are counted as not finished, not lost)\n',
    );
    return 130;
  }
  const unfinished = unfinishedMessage(result.report, flags.timeoutSeconds);
  if (unfinished !== undefined) {
    if (flags.json) io.stderr.write(`error: ${unfinished}\n`);
    return 2;
  }
  return result.report.ok ? 0 : 1;
}
