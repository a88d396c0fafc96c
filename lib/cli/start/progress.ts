/**
 * `npm start`'s progress: the boot steps as `- step` lines, then the workload's counts, on a
 * terminal as a bar drawn in place (cli-progress) while jobs run, elsewhere as plain lines (one
 * per phase and one every 5 s).
 */
import cliProgress from 'cli-progress';
import type { WorkloadProgress } from '../../sample/workload.ts';
import type { StartIo } from './io.ts';

/** The progress display of one run. */
export interface ProgressReporter {
  /** A boot or stop step (silent while the bar is shown). */
  step(message: string): void;
  /** The workload's latest counts. */
  update(progress: WorkloadProgress): void;
  /** Removes the bar, if shown, so that other output can follow. */
  stop(): void;
}

/** Lines shown while no bar is: at each phase change, and at most every this many ms. */
const LINE_EVERY_MS = 5_000;

/**
 * Progress written to `out`, as a bar while jobs run when `useBar` (then `out` must be the
 * terminal's `tty.WriteStream`), else as plain lines.
 */
export function progressReporter(out: StartIo['stdout'], useBar: boolean): ProgressReporter {
  let bar: cliProgress.SingleBar | undefined;
  let lastLine = 0;
  let lastPhase = '';
  const line = (p: WorkloadProgress) =>
    `${(p.elapsedMs / 1000).toFixed(0).padStart(4)} s  ${p.phase.padEnd(10)} sent ${p.sent}, completed ${p.completed}, dead-lettered ${p.deadLettered} of ~${p.total} jobs, ${p.inQueues} in queues`;
  return {
    step(message: string) {
      if (bar) return;
      out.write(`- ${message}\n`);
    },
    update(p: WorkloadProgress) {
      if (useBar && p.phase === 'running') {
        const payload = { completed: p.completed, dlq: p.deadLettered, inQueues: p.inQueues };
        const total = Math.max(p.total, p.completed + p.deadLettered, 1);
        if (!bar) {
          bar = new cliProgress.SingleBar(
            {
              format:
                'jobs {bar} {value}/{total} | completed {completed} | dead-lettered {dlq} | in queues {inQueues} | {duration}s',
              // A bar is only asked for on a terminal, whose stream is a tty.WriteStream.
              stream: out as NodeJS.WriteStream,
              hideCursor: true,
            },
            cliProgress.Presets.shades_classic,
          );
          bar.start(total, 0, payload);
        }
        bar.setTotal(total);
        bar.update(p.completed + p.deadLettered, payload);
        return;
      }
      if (bar && p.phase !== 'running') {
        bar.stop();
        bar = undefined;
      }
      const now = Date.now();
      if (p.phase !== lastPhase || now - lastLine >= LINE_EVERY_MS) {
        out.write(`${line(p)}\n`);
        lastLine = now;
        lastPhase = p.phase;
      }
    },
    stop() {
      bar?.stop();
      bar = undefined;
    },
  };
}
